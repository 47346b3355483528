package io.dendrite.core;

/**
 * What a Dendrite did, copied at one moment by {@link RangeCache#metrics()}: gets, hits, misses, operations that
 * found the cache unavailable, writes, and the cache round trips each kind of operation cost.
 *
 * @param gets gets served
 * @param hits gets answered from the cache: from the near cache or the cache servers
 * @param nearHits of those, gets answered from the near cache alone (no round trip)
 * @param misses gets that queried the data store
 * @param cacheUnavailable gets and writes that found a cache server unreachable
 * @param writes inserts, updates and deletes
 * @param entriesInvalidated cached entries deleted by writes
 * @param entriesRefreshed cached entries updated by writes
 * @param writesOutlivingLease writes whose data-store write ended after their interval lease lapsed (the lifetime of
 *     {@link Dendrite.Builder#intervalLeases}): each then dropped every cached result overlapping its interval. More
 *     than a few mean the lifetime is shorter than the data store's slow writes
 * @param roundTripsPerHit average cache round trips of a hit
 * @param roundTripsPerMiss average cache round trips of a miss
 * @param roundTripsPerWrite average cache round trips of a write
 * @param nearEntries results the near cache holds now (0 when it is off)
 * @param nearBytes their weight: encoded bytes, as the cache servers hold them
 * @param nearEvictions results the near cache evicted to stay within its bound
 * @param entriesMovedToNearCache cached results that writes deleted from the cache servers to keep current in the near
 *     cache alone (only the range's sole owner does this, for results with change records: later writes of them then
 *     cost no round trip)
 * @param cachedEntries results registered in PrInT now: the cache servers' entries this Dendrite keeps current
 */
public record DendriteMetrics(
    long gets,
    long hits,
    long nearHits,
    long misses,
    long cacheUnavailable,
    long writes,
    long entriesInvalidated,
    long entriesRefreshed,
    long writesOutlivingLease,
    double roundTripsPerHit,
    double roundTripsPerMiss,
    double roundTripsPerWrite,
    long nearEntries,
    long nearBytes,
    long nearEvictions,
    long entriesMovedToNearCache,
    long cachedEntries) {

  /**
   * This Dendrite's counts and another's together, as of one Dendrite serving both: counts and holdings added, the
   * round trips per operation averaged weighted by each one's operations. A Dendrite over many processes adds up its
   * ranges' this way.
   */
  public DendriteMetrics plus(DendriteMetrics other) {
    return new DendriteMetrics(
        gets + other.gets,
        hits + other.hits,
        nearHits + other.nearHits,
        misses + other.misses,
        cacheUnavailable + other.cacheUnavailable,
        writes + other.writes,
        entriesInvalidated + other.entriesInvalidated,
        entriesRefreshed + other.entriesRefreshed,
        writesOutlivingLease + other.writesOutlivingLease,
        weighted(roundTripsPerHit, hits, other.roundTripsPerHit, other.hits),
        weighted(roundTripsPerMiss, misses, other.roundTripsPerMiss, other.misses),
        weighted(roundTripsPerWrite, writes, other.roundTripsPerWrite, other.writes),
        nearEntries + other.nearEntries,
        nearBytes + other.nearBytes,
        nearEvictions + other.nearEvictions,
        entriesMovedToNearCache + other.entriesMovedToNearCache,
        cachedEntries + other.cachedEntries);
  }

  /**
   * These counts with nothing held ({@link #nearEntries}, {@link #nearBytes}, {@link #cachedEntries} zero): what a
   * Dendrite that was closed leaves to a total, whose counts must not go back while its holdings are gone.
   */
  public DendriteMetrics withNothingHeld() {
    return new DendriteMetrics(
        gets,
        hits,
        nearHits,
        misses,
        cacheUnavailable,
        writes,
        entriesInvalidated,
        entriesRefreshed,
        writesOutlivingLease,
        roundTripsPerHit,
        roundTripsPerMiss,
        roundTripsPerWrite,
        0,
        0,
        nearEvictions,
        entriesMovedToNearCache,
        0);
  }

  private static double weighted(double average, long count, double otherAverage, long otherCount) {
    long both = count + otherCount;
    return both == 0 ? 0 : (average * count + otherAverage * otherCount) / both;
  }
}
