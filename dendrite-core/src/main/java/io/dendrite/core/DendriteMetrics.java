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
    long entriesMovedToNearCache) {}
