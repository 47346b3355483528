package io.dendrite.core;

import java.util.Objects;
import java.util.function.Function;

/**
 * A kind of write as data (the CPR paper's "DML command" with its functions): the command's byte form, so that a
 * process that does not own the range can send it to the owner, and what running it does: {@link #apply} to the data
 * store, {@link #cacheUpdate} to a cached result set. Every process of a service registers the same kinds under the same
 * names, so the owner can run any command another process sends.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 * @param <C> the command
 */
public interface WriteCommand<K extends Comparable<? super K>, R, C> {

  /** The commands of this kind: a write naming it must carry one. */
  Class<C> type();

  /** The command's byte form. */
  byte[] encode(C command);

  /**
   * Reads a command back from {@link #encode}'s output.
   *
   * @throws IllegalArgumentException if {@code bytes} is not one
   */
  C decode(byte[] bytes);

  /** Applies the command to the data store, as {@link ChangeApplier#apply}. */
  void apply(C command) throws Exception;

  /**
   * Applies the command as the range owner holding {@code owner}: a kind that can fence its statements applies it
   * only while {@code owner} is not fenced out in the data store ({@link StoreFence}), and otherwise throws {@link
   * StoreFencedOutException} having changed nothing. {@link SqlWriteCommand} does. The default applies it unfenced
   * ({@link #apply(Object)}): a former owner's statement that arrives after a takeover is then applied.
   */
  default void apply(C command, FenceToken owner) throws Exception {
    apply(command);
  }

  /**
   * How the command changes a cached result set ({@link Dendrite#write}'s {@code cacheUpdate}); null (the default)
   * when the Dendrite writes around, or keeps commands of this kind as {@link ChangeRecords}.
   */
  default CacheUpdate<K, R> cacheUpdate(C command) {
    return null;
  }

  /**
   * The type of change {@link #change} makes of a command: what a write-back Dendrite's buffers ({@link
   * WriteBuffers}) or an outage-tolerant Dendrite's guard ({@link OutageTolerance}) take in place of running {@link
   * #apply}. By default the command's own type: the command is the change.
   */
  default Class<?> changeType() {
    return type();
  }

  /**
   * The change a write-back buffer or an outage guard takes for {@code command}, of {@link #changeType}; by default
   * the command itself. A kind whose commands are application values (a record, say) while its buffered changes are
   * of the write-back module's vocabulary converts them here, so that call sites pass the same argument under every
   * write policy.
   */
  default Object change(C command) {
    return command;
  }

  /**
   * A kind of write whose commands are Java records of common value types (as {@link RowCodec#ofRecord}), in one
   * line: {@code WriteCommand.of(Deposit.class, deposit -> accounts.add(deposit), deposit -> CacheUpdate.putting(...))}.
   * Its byte form is the record's, so any process of a service can send it to a range's owner.
   *
   * @param apply applies a command to the data store
   * @param cacheUpdate how a command changes a cached result set; null for a Dendrite that writes around
   * @throws IllegalArgumentException if {@code type} is not such a record, or cannot be read from this module
   */
  static <K extends Comparable<? super K>, R, C extends Record> WriteCommand<K, R, C> of(
      Class<C> type,
      ChangeApplier<? super C> apply,
      Function<? super C, CacheUpdate<K, R>> cacheUpdate) {
    Objects.requireNonNull(apply, "apply");
    RecordBytes<C> bytes = RecordBytes.of(type);
    return new WriteCommand<>() {
      @Override
      public Class<C> type() {
        return type;
      }

      @Override
      public byte[] encode(C command) {
        return bytes.encode(command);
      }

      @Override
      public C decode(byte[] encoded) {
        return bytes.decode(encoded);
      }

      @Override
      public void apply(C command) throws Exception {
        apply.apply(command);
      }

      @Override
      public CacheUpdate<K, R> cacheUpdate(C command) {
        return cacheUpdate == null ? null : cacheUpdate.apply(command);
      }
    };
  }

  /**
   * The most common kind of write, in one line: its command is a row, which {@code apply} inserts or updates in the
   * data store and which then replaces its old version in the cached results ({@link CacheUpdate#putting}): {@code
   * WriteCommand.putting(rows, score -> upsert(score))}. The rows must be records ({@link RowCodec#ofRecord}).
   */
  static <K extends Comparable<? super K>, R extends Record> WriteCommand<K, R, R> putting(
      Class<R> type, RowCodec<K, R> rows, ChangeApplier<? super R> apply) {
    Objects.requireNonNull(rows, "rows");
    return of(type, apply, row -> CacheUpdate.putting(rows, row));
  }
}
