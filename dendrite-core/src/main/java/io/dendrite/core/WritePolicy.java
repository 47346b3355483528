package io.dendrite.core;

/** What a write does to the cached result sets it impacts, and when it reaches the data store. */
public enum WritePolicy {
  /** Delete them (under Q-invalidate leases); the next get refills them from the data store. */
  WRITE_AROUND,
  /** Update them (read-modify-write under Q-refresh leases) around the data store write. */
  WRITE_THROUGH,
  /**
   * Update them as write-through does, but hand the change to a {@link WriteBuffer} instead of the data
   * store: the write is acknowledged once it is buffered, and a get that misses applies the buffered writes
   * overlapping its interval before it queries. Chosen with its buffer, {@link Dendrite.Builder#writeBack}.
   */
  WRITE_BACK
}
