package io.dendrite.core.interval;

/** The two kinds of {@link IntervalLeases LeMInT} lease: Shared for read misses, eXclusive for writes. */
public enum LeaseMode {
  /** Taken by a get that misses; compatible with other Shared leases. */
  SHARED,
  /** Taken by an insert, update or delete; excludes every other lease on an overlapping interval. */
  EXCLUSIVE;

  boolean conflictsWith(LeaseMode other) {
    return this == EXCLUSIVE || other == EXCLUSIVE;
  }
}
