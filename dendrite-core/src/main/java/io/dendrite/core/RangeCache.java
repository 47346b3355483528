package io.dendrite.core;

import io.dendrite.core.interval.IntervalLease;
import io.dendrite.core.interval.LeaseMode;
import io.dendrite.core.log.PredicateLog;
import io.dendrite.iq.client.Flight;
import io.dendrite.iq.client.IqClient;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link Dendrite} of one process, and the engine every deployment runs per range: caches the result sets of range
 * predicates on one attribute of one collection ({@code WHERE attr BETWEEN lb AND ub}) and keeps them strongly
 * consistent with the data store: no get returns a value older than the last acknowledged write (the CPR paper,
 * Figure 3). Besides the named queries and commands of {@link Dendrite}, it takes the functions at the call ({@link
 * #get(Comparable, Comparable, RangeQuery)}, {@link #write(Comparable, Comparable, Object, ChangeApplier,
 * CacheUpdate)}).
 *
 * <p>A {@link #get get} is answered from the cache when a cached entry (or set of entries) covers its
 * interval; otherwise it takes the entry's I lease in the cache server and a Shared lease on the
 * interval in process (LeMInT), queries the data store, stores the result and registers its interval
 * in PrInT. A {@link #write write} (an insert, update or delete) takes an eXclusive lease on
 * the interval it touches, finds every cached entry whose interval overlaps it, and deletes
 * ({@link WritePolicy#WRITE_AROUND}) or updates ({@link WritePolicy#WRITE_THROUGH}) them under Q leases
 * around the data store write (a write whose lease lapsed before the data store write ended then drops
 * every overlapping entry, including those gets cached meanwhile: {@link Dendrite.Builder#intervalLeases}); {@link WritePolicy#WRITE_BACK} updates them and hands the change to a
 * {@link WriteBuffer} instead of the data store, and a missing get applies the overlapping buffered writes
 * first.
 *
 * <p>β bounds the data two cached result sets may share, relative to the smaller one: 1 caches each
 * predicate as its own entry; 0 caches result sets as one entry per attribute value (points) that gets
 * assemble with one multi-get; in between, caching a result set first drops the entries it would
 * duplicate by more than β. A get whose interval lies inside a cached entry's is answered from it.
 *
 * <p>Bounds are inclusive. Thread-safe; one Dendrite per range in a cache tier, whatever process it is in (the {@link
 * Coordinator} enforces it: the default {@link LocalCoordinator} refuses a second one, here or in another process).
 * The work is split by job: {@link ReadPath} serves gets, a {@link WritePath} chosen when the Dendrite is built
 * serves writes, and {@link CacheParts} holds what they share; this class checks arguments, holds the
 * leases around a write and counts.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
public final class RangeCache<K extends Comparable<? super K>, R> implements Dendrite<K, R> {
  /** The near cache's default bound: 64 MiB of encoded results. */
  static final long DEFAULT_NEAR_CACHE_BYTES = 64L << 20;

  private final DomainType<K> type;
  private final K min;
  private final K max;
  private final IqClient cache;
  private final WritePolicy policy;
  private final TypedWriteBuffer<K, ?> writeBuffer;

  /** Whether the write buffer was opened for this Dendrite ({@link WriteBuffers}), which then closes it. */
  private final boolean closesWriteBuffer;

  /** The data-store side of writes and misses under {@link Dendrite.Builder#outageTolerance}; null without. */
  private final OutageTolerance.RangeGuard<K, Object> guard;

  /** The type of change the guard writes; null without one. */
  private final Class<?> guardChanges;

  private final ChangeRecords<K, R, ?> changeRecords;
  private final boolean leasesEnabled;
  private final boolean repairLapsedWrites;
  private final Coordinator.RangeClaim claim;
  private final EntryIndex<K> index;
  private final CacheParts<K, R> common;
  private final ReadPath<K, R> reads;
  private final WritePath<K, R> writes;
  private final DendriteCounters metrics = new DendriteCounters();

  /** {@code <collection>.<domain>}: names the range in meters and messages. */
  private final String rangeName;

  /** The near cache (L1), or null: off, or this process may not keep the range's results in memory. */
  private final LocalResults<R> local;

  private final Map<String, RangeQuery<K, R>> queries;
  private final Map<String, WriteCommand<K, R, ?>> commands;

  RangeCache(Dendrite.Builder<K, R> builder) {
    this.type = builder.type;
    this.min = builder.min;
    this.max = builder.max;
    this.cache = builder.cache;
    this.policy = builder.policy;
    this.writeBuffer = builder.writeBuffer;
    this.closesWriteBuffer = builder.closesWriteBuffer;
    this.changeRecords = builder.changeRecords;
    this.leasesEnabled = builder.leasesEnabled;
    this.repairLapsedWrites = builder.repairLapsedWrites;
    this.rangeName = builder.collection + "." + builder.domain;
    this.queries = Map.copyOf(builder.queries);
    this.commands = Map.copyOf(builder.commands);
    CacheKeys<K> keys = new CacheKeys<>(builder.collection, builder.domain, type);
    Optional<Coordinator.RangeClaim> buffersClaim =
        writeBuffer == null
            ? Optional.empty()
            : writeBuffer.rangeClaim(builder.collection, builder.domain);
    this.claim =
        buffersClaim.isPresent()
            ? buffersClaim.get()
            : builder.ownershipGuarded
                ? builder.coordinator.claim(builder.collection, builder.domain, cache)
                : builder.coordinator.claim(builder.collection, builder.domain);
    try {
      this.index =
          new EntryIndex<>(type, keys, new PredicateLog(cache, keys::logKey, builder.alpha));
      index.rebuild();
    } catch (RuntimeException e) {
      claim.close();
      throw e;
    }
    this.common =
        new CacheParts<>(
            cache,
            index,
            metrics,
            builder.rows,
            changeRecords,
            leasesEnabled,
            builder.intervalLeaseLifetime,
            builder.intervalLeaseTimeout);
    if (builder.dropCached) {
      // Unregistered first, deleted second, as every drop: nothing can serve them meanwhile.
      index.uncoverAll();
      for (EntryIndex.Entry<K> entry : index.all()) {
        common.drop(entry, new RoundTrips());
      }
      index.flushLog();
    }
    this.local =
        builder.nearCacheBytes > 0
                && leasesEnabled
                // Both: a claim that vouches for memory but lets another process own the range
                // would
                // let that process's writes leave this one's copies stale.
                && claim.mayKeepResultsInMemory()
                && claim.excludesOtherOwners()
            ? new LocalResults<>(builder.nearCacheBytes, builder.writesDropNearCopies)
            : null;
    if (local != null) {
      index.whenRemoved(local::drop);
    }
    this.reads = new ReadPath<>(common, builder.beta, writeBuffer, local, this::stillOwned);
    this.writes =
        !leasesEnabled
            ? new UnleasedWrite<>(common, policy, writeBuffer)
            : policy == WritePolicy.WRITE_AROUND
                ? new WriteAround<>(common)
                : new RefreshingWrite<>(
                    common,
                    writeBuffer,
                    claim.excludesOtherOwners(),
                    builder.nearOnlyCopiesDeleteServersCopies);
    this.guardChanges =
        builder.outageTolerance == null ? null : builder.outageTolerance.changeType();
    this.guard = openGuard(builder);
  }

  /**
   * Opens the range's guard ({@link Dendrite.Builder#outageTolerance}) once the range is claimed, giving the claim up
   * if it cannot.
   */
  @SuppressWarnings("unchecked")
  private OutageTolerance.RangeGuard<K, Object> openGuard(Dendrite.Builder<K, R> builder) {
    if (builder.outageTolerance == null) {
      return null;
    }
    try {
      return (OutageTolerance.RangeGuard<K, Object>)
          (builder.ownership == null
              ? builder.outageTolerance.open(type, builder.collection, builder.domain, cache)
              : builder.outageTolerance.open(type, builder.ownership, cache));
    } catch (RuntimeException failed) {
      claim.close();
      throw failed;
    }
  }

  @Override
  public List<R> get(String query, K lowerBound, K upperBound) {
    return get(lowerBound, upperBound, BoundNames.lookUp(queries, "query", query, rangeName));
  }

  @Override
  public <C> void write(String command, K lowerBound, K upperBound, C argument) {
    WriteCommand<K, R, ?> kind = BoundNames.lookUp(commands, "write command", command, rangeName);
    try {
      writeBound(command, kind, lowerBound, upperBound, argument);
    } catch (RuntimeException failure) {
      throw NotAppliedException.orOutcomeUnknown(failure);
    }
  }

  private <C> void writeBound(
      String name, WriteCommand<K, R, C> kind, K lowerBound, K upperBound, Object argument) {
    write(lowerBound, upperBound, BoundNames.argument(name, kind.type(), argument), kind);
  }

  /**
   * Returns the rows whose attribute lies in [{@code lowerBound}, {@code upperBound}], ordered by the
   * attribute: from the cache if it holds them, otherwise from {@code query}, caching the result.
   *
   * @throws IllegalArgumentException if a bound is null, of the wrong type, outside the domain's
   *     [min, max], or {@code lowerBound > upperBound}
   * @throws DataStoreException if {@code query} threw a checked exception (nothing was cached), or, under
   *     write-back, the overlapping buffered writes could not be applied first ({@link
   *     DataStoreUnavailableException} when the store could not be reached)
   * @throws DendriteBusyException if conflicting writes held the interval past the lease timeout
   */
  public List<R> get(K lowerBound, K upperBound, RangeQuery<K, R> query) {
    Interval<K> interval = interval(lowerBound, upperBound);
    Objects.requireNonNull(query, "query");
    RoundTrips trips = new RoundTrips();
    Optional<List<R>> cached = reads.lookup(interval, trips);
    if (cached.isPresent()) {
      metrics.hits.increment();
      metrics.completed(DendriteCounters.Operation.GET_HIT, trips.count());
      return cached.get();
    }
    metrics.misses.increment();
    try {
      claim.check();
      return reads.fill(interval, guard == null ? query : guarded(query), trips);
    } finally {
      metrics.completed(DendriteCounters.Operation.GET_MISS, trips.count());
      compactLogWhenDue();
    }
  }

  /** {@code query} as the guard runs it: after what the guard kept for its interval, or refused. */
  private RangeQuery<K, R> guarded(RangeQuery<K, R> query) {
    return (lo, hi) -> guard.miss(Interval.of(lo, hi), () -> query.query(lo, hi));
  }

  /**
   * Writes: applies {@code change} to the data store with {@code apply} and deletes or updates (with {@code
   * cacheUpdate}) every cached result set whose interval overlaps [{@code lowerBound}, {@code upperBound}], the
   * interval the write touches. Inserts, updates and deletes are all writes: the change and the functions say
   * which, and the cache needs to know nothing more. A write-back Dendrite writes only the {@link WriteCommand}s it
   * was built with ({@link #write(Comparable, Comparable, Object, WriteCommand)}).
   *
   * @param cacheUpdate how the write changes a cached result set; unused by write-around, and may be null when
   *     {@code change} is of the type of the Builder's {@link Dendrite.Builder#changeRecords ChangeRecords}
   * @throws IllegalArgumentException for bad bounds, as {@link #get}
   * @throws IllegalStateException on a write-back Dendrite
   * @throws DataStoreException if {@code apply} threw a checked exception (the cache is left consistent)
   * @throws DendriteBusyException if conflicting writes held the interval past the lease timeout
   */
  public <C> void write(
      K lowerBound,
      K upperBound,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate) {
    Interval<K> interval = interval(lowerBound, upperBound);
    if (writeBuffer != null || guard != null) {
      throw new IllegalStateException(
          "a write-back or outage-tolerant Dendrite writes the commands it was built with: use"
              + " write(lowerBound, upperBound, command, kind)");
    }
    Objects.requireNonNull(apply, "apply");
    write(interval, change, apply, cacheUpdate);
  }

  private <C> void write(
      Interval<K> interval,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate) {
    if (policy != WritePolicy.WRITE_AROUND
        && cacheUpdate == null
        && (changeRecords == null || !changeRecords.changeType().isInstance(change))) {
      throw new NullPointerException(
          "cacheUpdate is required for a change that is not a "
              + (changeRecords == null
                  ? "ChangeRecords change (none configured)"
                  : changeRecords.changeType().getName()));
    }
    claim.check();
    RoundTrips trips = new RoundTrips();
    try {
      if (!leasesEnabled) {
        writes.write(interval, change, apply, cacheUpdate, new RefreshedResults<>(), trips);
      } else {
        IntervalLease<K> exclusive = common.acquire(interval, LeaseMode.EXCLUSIVE);
        try {
          // A flight: the cache requests of each step of the write go out in one write per
          // server when the write first waits for a reply. Nothing in the write waits for
          // anything but its own replies while a request is held: the data store is written
          // after the leases' replies are in.
          LocalWrite<K, R> touched = beginLocalWrite(interval);
          RefreshedResults<R> refreshed =
              touched == null
                  ? new RefreshedResults<>()
                  : new RefreshedResults<>(touched.marks().held(), local.hasRoom());
          try (Flight flight = cache.flight()) {
            writes.write(interval, change, apply, cacheUpdate, refreshed, trips);
          } finally {
            endLocalWrite(interval, touched, refreshed);
          }
        } finally {
          exclusive.close();
          // Checked after the data-store write, whether it threw or not (a failed statement may
          // still have applied): a lease that lapsed before then let gets cache what the write
          // changed. Only a clock read when the lease held.
          if (repairLapsedWrites && exclusive.isExpired()) {
            common.dropWhatALapsedWriteMissed(interval, trips);
          }
        }
      }
      metrics.writes.increment();
    } finally {
      metrics.completed(DendriteCounters.Operation.WRITE, trips.count());
      compactLogWhenDue();
    }
  }

  /** The near cache's marks of one write, and the intervals of the results they are on. */
  private record LocalWrite<K extends Comparable<? super K>, R>(
      LocalResults.WriteMarks<R> marks, Map<String, Interval<K>> intervals) {}

  /**
   * Marks the near cache's copies of the results the write may change as being written, and drops them, before the
   * write changes anything; under the write's Exclusive lease, so no overlapping result can be registered meanwhile.
   *
   * @return the marks, for {@link #endLocalWrite}; null without a near cache
   */
  private LocalWrite<K, R> beginLocalWrite(Interval<K> interval) {
    if (local == null) {
      return null;
    }
    Map<String, Interval<K>> intervals = new LinkedHashMap<>();
    for (EntryIndex.Entry<K> entry : index.impactedBy(interval)) {
      intervals.put(entry.key(), entry.interval());
    }
    return new LocalWrite<>(local.beginWrite(List.copyOf(intervals.keySet())), intervals);
  }

  /**
   * Ends the write's marks, however the write ended: a result the write committed to the cache servers is kept in
   * the near cache as committed (rewritten whole, or the copy held before the write with the change applied, as a
   * reader of the appended change record computes it); every other marked result is dropped again.
   */
  private void endLocalWrite(
      Interval<K> interval, LocalWrite<K, R> begun, RefreshedResults<R> refreshed) {
    if (local == null) {
      return;
    }
    // Results registered after the write began (only possible past a lapsed lease) are dropped too.
    index.impactedBy(interval).stream()
        .map(EntryIndex.Entry::key)
        .filter(key -> !begun.intervals().containsKey(key))
        .forEach(local::drop);
    Map<String, LocalResults.Copy<R>> after = new HashMap<>();
    CachedRows.Fold<K, R> fold = null; // made once, for the first result that takes the record
    for (Map.Entry<String, Interval<K>> marked : begun.intervals().entrySet()) {
      String key = marked.getKey();
      LocalResults.Copy<R> rewritten = refreshed.rewrittenTo(key);
      if (rewritten != null) {
        after.put(key, rewritten);
        continue;
      }
      int recordBytes = refreshed.appendedBytes(key);
      LocalResults.Copy<R> adopted = refreshed.adoptedFrom(key);
      LocalResults.Copy<R> before = adopted != null ? adopted : begun.marks().before(key);
      if (recordBytes >= 0 && before != null) {
        try {
          if (fold == null) {
            fold = common.changeFold(refreshed.encodedChange());
          }
          List<R> rows = fold.apply(marked.getValue(), before.rows());
          int weight =
              refreshed.isDetached(key)
                  ? estimatedWeight(before, rows, recordBytes)
                  : before.weight() + recordBytes; // the servers' value grew by the record
          after.put(key, new LocalResults.Copy<>(rows, weight));
        } catch (RuntimeException unreadable) {
          // The copy is dropped: the next get reads the servers, and their reader reports this.
        }
      }
    }
    local.endWrite(begun.marks(), after);
  }

  /**
   * The weight of a result kept in the near cache alone after a change: nothing encodes it any more, so its encoded
   * size is estimated from the rows it gained or lost (and would otherwise only grow with every write).
   */
  private static int estimatedWeight(LocalResults.Copy<?> before, List<?> rows, int recordBytes) {
    if (before.rows().isEmpty()) {
      return before.weight() + recordBytes;
    }
    long scaled = (long) before.weight() * rows.size() / before.rows().size();
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, scaled));
  }

  /** Whether this process can still show it owns the range; the near cache is used only then. */
  private boolean stillOwned() {
    try {
      claim.check();
      return true;
    } catch (IllegalStateException lost) {
      return false;
    }
  }

  /**
   * Writes {@code command}, a write of the kind {@code kind}: {@link #write(Comparable, Comparable, Object,
   * ChangeApplier, CacheUpdate)} with the kind's {@link WriteCommand#apply} and {@link WriteCommand#cacheUpdate};
   * under write-back, the command is handed to the write buffer instead of applied.
   *
   * @throws IllegalArgumentException for bad bounds, as {@link #get}; under write-back, for a kind this Dendrite was
   *     not built with ({@link Dendrite.Builder#writeBack}) or a command the write buffer refuses, before anything changes
   */
  public <C> void write(K lowerBound, K upperBound, C command, WriteCommand<K, R, C> kind) {
    Interval<K> interval = interval(lowerBound, upperBound);
    Objects.requireNonNull(kind, "kind");
    CacheUpdate<K, R> cacheUpdate = kind.cacheUpdate(command);
    if (writeBuffer != null) {
      // The buffer takes the kind's change of the command (by default the command itself).
      Object change = kind.change(command);
      writeBuffer.check(interval, kind, change);
      write(interval, change, unused -> kind.apply(command), cacheUpdate);
    } else if (guard != null) {
      Object change = kind.change(command);
      if (!guardChanges.isInstance(change)) {
        throw new IllegalArgumentException(
            "an outage-tolerant Dendrite writes "
                + guardChanges.getName()
                + " changes, not "
                + (change == null ? "null" : change.getClass().getName()));
      }
      guard.check(interval, change);
      // The guard writes the data store, or keeps the change while it cannot.
      write(interval, change, unused -> guard.write(interval, change), cacheUpdate);
    } else {
      write(interval, command, kind::apply, cacheUpdate);
    }
  }

  /**
   * Rewrites the range's log compacted when it is due, only while this process still owns the range: a former owner
   * must not rewrite the log its successor appends to.
   */
  private void compactLogWhenDue() {
    try {
      claim.check();
    } catch (IllegalStateException notOwned) {
      return;
    }
    index.compactLogWhenDue();
  }

  /** What this Dendrite has done so far, copied now. */
  public DendriteMetrics metrics() {
    return metrics.snapshot(local, index.size());
  }

  @Override
  public String rangeName() {
    return rangeName;
  }

  /** Whether this Dendrite keeps results in its own memory (the near cache): see {@link Dendrite.Builder#nearCache}. */
  public boolean nearCacheEnabled() {
    return local != null;
  }

  /** The number of cached result sets registered in PrInT. */
  public int cachedEntries() {
    return index.size();
  }

  /** Test-only: see {@link EntryIndex#compactLogOnlyAtRebuildForTesting}. */
  void compactLogOnlyAtRebuildForTesting() {
    index.compactLogOnlyAtRebuildForTesting();
  }

  /** Test-only: see {@link EntryIndex#afterCoverageLookForTesting}. */
  void afterCoverageLookForTesting(Runnable hook) {
    index.afterCoverageLookForTesting(hook);
  }

  /**
   * Appends buffered log records, closes the write buffer if it was opened for this Dendrite, and gives the range up.
   * Does not close the cache client.
   */
  @Override
  public void close() {
    if (local != null) {
      // Before the range is given up: its next owner's writes would leave these behind.
      local.dropAll();
    }
    try {
      index.flushLog();
    } finally {
      try {
        if (guard != null) {
          guard.close();
        }
        if (closesWriteBuffer) {
          // While the range is still claimed: closing drains what the buffer holds, which no
          // other owner may do meanwhile.
          writeBuffer.close();
        }
      } finally {
        claim.close();
      }
    }
  }

  private Interval<K> interval(K lowerBound, K upperBound) {
    return type.interval(lowerBound, upperBound, min, max);
  }
}
