package io.dendrite.core;

import io.dendrite.core.interval.Interval;

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
 * @param <K> the attribute's type
 */
public interface WriteBuffer<K extends Comparable<? super K>> {

  /**
   * Refuses, before anything is changed, a change this buffer cannot hold.
   *
   * @throws IllegalArgumentException naming what is wrong with {@code change}
   */
  void check(Object change);

  /**
   * Buffers {@code change}, a write touching {@code interval}, after every buffered write that overlaps it.
   * Returns once the write is durable as the buffer promises (pinned on its replicas), or once the data store
   * applied it when the buffer falls back to write-through; a thrown exception means it was not acknowledged.
   */
  void buffer(Interval<K> interval, Object change);

  /** Applies to the data store, oldest first, every buffered write whose interval overlaps {@code interval}. */
  void applyOverlapping(Interval<K> interval);
}
