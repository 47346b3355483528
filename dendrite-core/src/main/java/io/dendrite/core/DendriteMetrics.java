package io.dendrite.core;

import java.util.concurrent.atomic.LongAdder;

/**
 * What a Dendrite did: gets, hits, misses, gets served by the data store because the cache was
 * unavailable, writes, and the cache round trips each kind of operation cost. Thread-safe.
 */
public final class DendriteMetrics {

  /** Kinds of operation whose cache round trips are counted. */
  public enum Operation {
    /** A get answered from the cache. */
    GET_HIT,
    /** A get that went to the data store. */
    GET_MISS,
    /** An insert, update or delete. */
    WRITE
  }

  /**
   * A point-in-time copy.
   *
   * @param gets gets served
   * @param hits gets answered from the cache
   * @param misses gets that queried the data store
   * @param cacheUnavailable gets and writes that found a cache server unreachable
   * @param writes inserts, updates and deletes
   * @param entriesInvalidated cached entries deleted by writes
   * @param entriesRefreshed cached entries updated by writes
   * @param roundTripsPerHit average cache round trips of a hit
   * @param roundTripsPerMiss average cache round trips of a miss
   * @param roundTripsPerWrite average cache round trips of a write
   */
  public record Snapshot(long gets, long hits, long misses, long cacheUnavailable, long writes,
      long entriesInvalidated, long entriesRefreshed, double roundTripsPerHit, double roundTripsPerMiss,
      double roundTripsPerWrite) {}

  final LongAdder hits = new LongAdder();
  final LongAdder misses = new LongAdder();
  final LongAdder cacheUnavailable = new LongAdder();
  final LongAdder writes = new LongAdder();
  final LongAdder entriesInvalidated = new LongAdder();
  final LongAdder entriesRefreshed = new LongAdder();
  private final LongAdder[] roundTrips = new LongAdder[Operation.values().length];
  private final LongAdder[] operations = new LongAdder[Operation.values().length];

  DendriteMetrics() {
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
  public Snapshot snapshot() {
    return new Snapshot(hits.sum() + misses.sum(), hits.sum(), misses.sum(), cacheUnavailable.sum(), writes.sum(),
        entriesInvalidated.sum(), entriesRefreshed.sum(), average(Operation.GET_HIT), average(Operation.GET_MISS),
        average(Operation.WRITE));
  }

  private double average(Operation operation) {
    long count = operations[operation.ordinal()].sum();
    return count == 0 ? 0 : (double) roundTrips[operation.ordinal()].sum() / count;
  }
}
