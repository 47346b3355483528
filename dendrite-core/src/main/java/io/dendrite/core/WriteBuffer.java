package io.dendrite.core;

import java.util.Optional;

/**
 * Where a {@link WritePolicy#WRITE_BACK} Dendrite puts its writes (BuWrInT and the buffered writes of the CPR
 * paper, §3.2). The write-back module implements it; the Dendrite calls it under its interval leases, which is
 * what makes the calls safe:
 *
 * <ul>
 *   <li>{@link #buffer} runs under the Exclusive lease of the write's interval, so buffers of overlapping
 *       intervals arrive in their serial order;
 *   <li>{@link #applyOverlapping} runs under the Shared lease of a missing get's interval, just before the get
 *       queries the data store, so no overlapping write can be buffered until the query has returned.
 * </ul>
 *
 * <p>The buffer holds changes of type {@code C}: a write-back Dendrite is built with the {@link WriteCommand} kinds it
 * writes, each of whose commands is a {@code C} ({@link Dendrite.Builder#writeBack}), and hands the buffer a write's
 * command as its change.
 *
 * @param <K> the attribute's type
 * @param <C> the type of change the buffer holds
 */
public interface WriteBuffer<K extends Comparable<? super K>, C> extends AutoCloseable {

  /**
   * Refuses, before anything is changed, a change of the right type that this buffer still cannot hold as a write
   * touching {@code interval} (the default refuses none).
   *
   * @throws IllegalArgumentException naming what is wrong with {@code change}
   */
  default void check(Interval<K> interval, C change) {}

  /**
   * Buffers {@code change}, a write touching {@code interval}, after every buffered write that overlaps it.
   * Returns once the write is durable as the buffer promises (pinned on its replicas), or once the data store
   * applied it when the buffer falls back to write-through; a thrown exception means it was not acknowledged.
   */
  void buffer(Interval<K> interval, C change);

  /**
   * {@link #buffer} in steps, so that the Dendrite sends the buffer's cache requests in the same round trips as its
   * own (the Q leases of the cached results the write refreshes, then their commit): this sends what needs no
   * reply yet (e.g. the log record, the reads of the documents' buffered writes) and returns; {@link
   * Started#store()} sends the buffered writes; {@link Stored#await()} waits for them, with {@link #buffer}'s
   * meaning. The default does all of it in {@code store}.
   *
   * <p>A started write holds what it needs to go on (e.g. its documents' locks) until it is stored and awaited or
   * abandoned, so the Dendrite abandons it before it waits for a lease another writer holds, and starts again.
   */
  default Started start(Interval<K> interval, C change) {
    return new Started() {
      @Override
      public Stored store() {
        buffer(interval, change);
        return () -> {};
      }

      @Override
      public void abandon() {}
    };
  }

  /** A write {@link #start}ed: nothing is buffered until {@link #store()}. */
  interface Started {
    /**
     * Sends the buffered writes.
     *
     * @throws RuntimeException when the change cannot be buffered; nothing was then
     */
    Stored store();

    /** Gives up before {@link #store()}, releasing what was held; nothing is buffered. Idempotent. */
    void abandon();
  }

  /** A write whose buffered writes are on their way. */
  @FunctionalInterface
  interface Stored {
    /** Waits for them: returns once the write is acknowledged, as {@link WriteBuffer#buffer} returns. */
    void await();
  }

  /** Applies to the data store, oldest first, every buffered write whose interval overlaps {@code interval}. */
  void applyOverlapping(Interval<K> interval);

  /**
   * The range's ownership claim this buffer took when it was built, for the Dendrite of {@code collection}'s {@code
   * domain} over it to hold instead of claiming the range again: a buffer that rebuilds the range's buffered writes
   * from the cache tier must not do so beside the range's owner, so it claims the range before it reads anything.
   * Empty (the default) when the buffer took none; the Dendrite then claims the range from its coordinator.
   *
   * @throws IllegalStateException when the buffer belongs to another range than the Dendrite's
   */
  default Optional<Coordinator.RangeClaim> rangeClaim(String collection, String domain) {
    return Optional.empty();
  }

  /**
   * Stops the buffer; a Dendrite closes the buffers it opened ({@link WriteBuffers}), not one it was given. By
   * default, nothing.
   */
  @Override
  default void close() {}
}
