package io.dendrite.core;

/** What a write does to the cached result sets it impacts. */
public enum WritePolicy {
  /** Delete them (under Q-invalidate leases); the next get refills them from the data store. */
  WRITE_AROUND,
  /** Update them (read-modify-write under Q-refresh leases) around the data store write. */
  WRITE_THROUGH
}
