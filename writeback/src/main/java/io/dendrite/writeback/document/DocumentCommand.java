package io.dendrite.writeback.document;

import io.dendrite.core.CacheUpdate;
import io.dendrite.core.WriteCommand;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * The write command of a write-back Dendrite over a {@link RangeWriteBack}: a write is document changes, which the
 * Dendrite hands to the range write-back as they are ({@code Dendrite.Builder#writeBack(buffer, commands)}).
 *
 * <pre>{@code
 * DocumentCommand<Long, Row> save = DocumentCommand.updating(changes -> Row.cacheUpdateOf(changes));
 * RangeCache<Long, Row> dendrite = Dendrite.builder(DomainType.LONG, codec)...writeBack(buffer, List.of(save)).build();
 * dendrite.write(7L, 7L, new EntityChanges(new EntityKey("t", 7L), ChangeSequence.of(Change.set("v", 1))), save);
 * }</pre>
 *
 * <p>Its byte form, for a process that forwards the write to the range's owner, is each document's key and encoded
 * change sequence, in order.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
public final class DocumentCommand<K extends Comparable<? super K>, R>
    implements WriteCommand<K, R, DocumentChanges> {
  private final Function<? super DocumentChanges, CacheUpdate<K, R>> cacheUpdate;

  private DocumentCommand(Function<? super DocumentChanges, CacheUpdate<K, R>> cacheUpdate) {
    this.cacheUpdate = cacheUpdate;
  }

  /** Document changes whose effect on a cached result set {@code cacheUpdate} gives, write by write. */
  public static <K extends Comparable<? super K>, R> DocumentCommand<K, R> updating(
      Function<? super DocumentChanges, CacheUpdate<K, R>> cacheUpdate) {
    return new DocumentCommand<>(Objects.requireNonNull(cacheUpdate, "cacheUpdate"));
  }

  /**
   * Document changes kept in the cached result sets as change records, by the Dendrite's {@code ChangeRecords} (whose
   * type a write's changes must then be): they need no cache update.
   */
  public static <K extends Comparable<? super K>, R> DocumentCommand<K, R> keptAsChangeRecords() {
    return new DocumentCommand<>(changes -> null);
  }

  /**
   * Writes whose argument is an application value, a Java record of common value types (as {@code
   * WriteCommand.of}), that a write-back Dendrite buffers, or an outage-tolerant one writes, as the document changes
   * {@code changes} makes of it; {@code cacheUpdate} says how it changes a cached result set (null: the Dendrite keeps
   * the changes as change records). Call sites then pass the same record whatever the write policy:
   *
   * <pre>{@code
   * .command("set", DocumentCommand.of(Score.class,
   *     score -> new EntityChanges(new EntityKey("scores", score.id()), ChangeSequence.of(Change.set("points", score.points()))),
   *     score -> CacheUpdate.putting(rows, score)))
   * ...
   * scores.write("set", 102, 102, new Score(102, 42));
   * }</pre>
   *
   * @throws IllegalArgumentException if {@code type} is not such a record
   */
  public static <K extends Comparable<? super K>, R, C extends Record> WriteCommand<K, R, C> of(
      Class<C> type,
      Function<? super C, ? extends DocumentChanges> changes,
      Function<? super C, CacheUpdate<K, R>> cacheUpdate) {
    Objects.requireNonNull(changes, "changes");
    WriteCommand<K, R, C> record =
        WriteCommand.of(
            type,
            command -> {
              throw new UnsupportedOperationException(
                  "a DocumentCommand is written as document changes: by write-back's buffers or an outage"
                      + " tolerance's guard, not applied by the command");
            },
            cacheUpdate);
    return new WriteCommand<>() {
      @Override
      public Class<C> type() {
        return record.type();
      }

      @Override
      public byte[] encode(C command) {
        return record.encode(command);
      }

      @Override
      public C decode(byte[] bytes) {
        return record.decode(bytes);
      }

      @Override
      public void apply(C command) throws Exception {
        record.apply(command);
      }

      @Override
      public CacheUpdate<K, R> cacheUpdate(C command) {
        return record.cacheUpdate(command);
      }

      @Override
      public Class<?> changeType() {
        return DocumentChanges.class;
      }

      @Override
      public DocumentChanges change(C command) {
        return Objects.requireNonNull(changes.apply(command), "the document changes of " + command);
      }

      @Override
      public String toString() {
        return "DocumentCommand.of(" + type.getName() + ")";
      }
    };
  }

  @Override
  public Class<DocumentChanges> type() {
    return DocumentChanges.class;
  }

  @Override
  public byte[] encode(DocumentChanges command) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      List<EntityChanges> each = command.each();
      out.writeInt(each.size());
      for (EntityChanges one : each) {
        out.writeUTF(BufferedWriteKey.of(one.key()));
        byte[] changes = one.changes().encode();
        out.writeInt(changes.length);
        out.write(changes);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array does not fail
    }
    return bytes.toByteArray();
  }

  /**
   * @throws IllegalArgumentException if {@code bytes} is not {@link #encode}'s output
   */
  @Override
  public DocumentChanges decode(byte[] bytes) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      int count = in.readInt();
      if (count < 1 || count > bytes.length) {
        throw new IllegalArgumentException("not document changes: " + count + " documents");
      }
      List<EntityChanges> each = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        String key = in.readUTF();
        byte[] changes = new byte[in.readInt()];
        in.readFully(changes);
        each.add(new EntityChanges(BufferedWriteKey.parse(key), ChangeSequence.decode(changes)));
      }
      if (in.available() > 0) {
        throw new IllegalArgumentException(
            "not document changes: " + in.available() + " bytes after the last");
      }
      return DocumentChanges.of(each);
    } catch (IOException | NegativeArraySizeException | OutOfMemoryError truncated) {
      throw new IllegalArgumentException("not document changes: " + truncated, truncated);
    }
  }

  /** Never called: a write-back Dendrite hands the changes to its buffer, which applies them when it drains. */
  @Override
  public void apply(DocumentChanges command) {
    throw new UnsupportedOperationException(
        "document changes are buffered by RangeWriteBack, which applies them when it drains");
  }

  @Override
  public CacheUpdate<K, R> cacheUpdate(DocumentChanges command) {
    return cacheUpdate.apply(command);
  }
}
