package io.dendrite.core;

import java.util.concurrent.atomic.LongAdder;

/** A Dendrite's live counts, which {@link Dendrite#metrics()} copies into a {@link DendriteMetrics}. Thread-safe. */
final class DendriteCounters {

  /** Kinds of operation whose cache round trips are counted. */
  enum Operation {
    /** A get answered from the cache. */
    GET_HIT,
    /** A get that went to the data store. */
    GET_MISS,
    /** An insert, update or delete. */
    WRITE
  }

  final LongAdder hits = new LongAdder();
  final LongAdder misses = new LongAdder();
  final LongAdder cacheUnavailable = new LongAdder();
  final LongAdder writes = new LongAdder();
  final LongAdder entriesInvalidated = new LongAdder();
  final LongAdder entriesRefreshed = new LongAdder();
  final LongAdder entriesMovedToNearCache = new LongAdder();
  final LongAdder writesOutlivingLease = new LongAdder();
  private final LongAdder[] roundTrips = new LongAdder[Operation.values().length];
  private final LongAdder[] operations = new LongAdder[Operation.values().length];

  DendriteCounters() {
    for (int i = 0; i < roundTrips.length; i++) {
      roundTrips[i] = new LongAdder();
      operations[i] = new LongAdder();
    }
  }

  void completed(Operation operation, int cacheRoundTrips) {
    operations[operation.ordinal()].increment();
    roundTrips[operation.ordinal()].add(cacheRoundTrips);
  }

  /** The counts so far. */
  DendriteMetrics snapshot(LocalResults<?> local, int cachedEntries) {
    return new DendriteMetrics(
        hits.sum() + misses.sum(),
        hits.sum(),
        local == null ? 0 : local.hits(),
        misses.sum(),
        cacheUnavailable.sum(),
        writes.sum(),
        entriesInvalidated.sum(),
        entriesRefreshed.sum(),
        writesOutlivingLease.sum(),
        average(Operation.GET_HIT),
        average(Operation.GET_MISS),
        average(Operation.WRITE),
        local == null ? 0 : local.size(),
        local == null ? 0 : local.weight(),
        local == null ? 0 : local.evictions(),
        entriesMovedToNearCache.sum(),
        cachedEntries);
  }

  private double average(Operation operation) {
    long count = operations[operation.ordinal()].sum();
    return count == 0 ? 0 : (double) roundTrips[operation.ordinal()].sum() / count;
  }
}
