package io.dendrite.core;

import io.dendrite.core.interval.IntervalLease;
import io.dendrite.core.interval.LeaseMode;
import io.dendrite.core.log.PredicateLog;
import io.dendrite.iq.client.Flight;
import io.dendrite.iq.client.IqClient;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Caches the result sets of range predicates on one attribute of one collection ({@code WHERE attr
 * BETWEEN lb AND ub}) and keeps them strongly consistent with the data store: no get returns a value
 * older than the last acknowledged write (the CPR paper, Figure 3).
 *
 * <p>A {@link #get get} is answered from the cache when a cached entry (or set of entries) covers its
 * interval; otherwise it takes the entry's I lease in the cache server and a Shared lease on the
 * interval in process (LeMInT), queries the data store, stores the result and registers its interval
 * in PrInT. A {@link #write write} (an insert, update or delete) takes an eXclusive lease on
 * the interval it touches, finds every cached entry whose interval overlaps it, and deletes
 * ({@link WritePolicy#WRITE_AROUND}) or updates ({@link WritePolicy#WRITE_THROUGH}) them under Q leases
 * around the data store write (a write whose lease lapsed before the data store write ended then drops
 * every overlapping entry, including those gets cached meanwhile: {@link Builder#intervalLeases}); {@link WritePolicy#WRITE_BACK} updates them and hands the change to a
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
 * serves writes, and {@link RangeCache} holds what they share; this class checks arguments, holds the
 * leases around a write and counts.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
public final class Dendrite<K extends Comparable<? super K>, R> implements AutoCloseable {
  /** The near cache's default bound: 64 MiB of encoded results. */
  static final long DEFAULT_NEAR_CACHE_BYTES = 64L << 20;

  private final DomainType<K> type;
  private final K min;
  private final K max;
  private final IqClient cache;
  private final WritePolicy policy;
  private final TypedWriteBuffer<K, ?> writeBuffer;
  private final ChangeRecords<K, R, ?> changeRecords;
  private final boolean leasesEnabled;
  private final boolean repairLapsedWrites;
  private final Coordinator.RangeClaim claim;
  private final EntryIndex<K> index;
  private final RangeCache<K, R> common;
  private final ReadPath<K, R> reads;
  private final WritePath<K, R> writes;
  private final DendriteCounters metrics = new DendriteCounters();

  /** {@code <collection>.<domain>}: names the range in meters and messages. */
  private final String rangeName;

  /** The near cache (L1), or null: off, or this process may not keep the range's results in memory. */
  private final LocalResults<R> local;

  private Dendrite(Builder<K, R> builder) {
    this.type = builder.type;
    this.min = builder.min;
    this.max = builder.max;
    this.cache = builder.cache;
    this.policy = builder.policy;
    this.writeBuffer = builder.writeBuffer;
    this.changeRecords = builder.changeRecords;
    this.leasesEnabled = builder.leasesEnabled;
    this.repairLapsedWrites = builder.repairLapsedWrites;
    this.rangeName = builder.collection + "." + builder.domain;
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
        new RangeCache<>(
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
  }

  /**
   * Starts building a Dendrite for an attribute of type {@code type} whose rows {@code rows} encodes.
   */
  public static <K extends Comparable<? super K>, R> Builder<K, R> builder(
      DomainType<K> type, RowCodec<K, R> rows) {
    return new Builder<>(type, rows);
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
      return reads.fill(interval, query, trips);
    } finally {
      metrics.completed(DendriteCounters.Operation.GET_MISS, trips.count());
      compactLogWhenDue();
    }
  }

  /**
   * Writes: applies {@code change} to the data store with {@code apply} and deletes or updates (with {@code
   * cacheUpdate}) every cached result set whose interval overlaps [{@code lowerBound}, {@code upperBound}], the
   * interval the write touches. Inserts, updates and deletes are all writes: the change and the functions say
   * which, and the cache needs to know nothing more. A write-back Dendrite writes only the {@link WriteCommand}s it
   * was built with ({@link #write(Comparable, Comparable, Object, WriteCommand)}).
   *
   * @param cacheUpdate how the write changes a cached result set; unused by write-around, and may be null when
   *     {@code change} is of the type of the Builder's {@link Builder#changeRecords ChangeRecords}
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
    if (writeBuffer != null) {
      throw new IllegalStateException(
          "a write-back Dendrite writes the commands it was built with: use write(lowerBound,"
              + " upperBound, command, kind)");
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
   *     not built with ({@link Builder#writeBack}) or a command the write buffer refuses, before anything changes
   */
  public <C> void write(K lowerBound, K upperBound, C command, WriteCommand<K, R, C> kind) {
    Interval<K> interval = interval(lowerBound, upperBound);
    Objects.requireNonNull(kind, "kind");
    if (writeBuffer != null) {
      writeBuffer.check(interval, kind, command);
    }
    write(interval, command, kind::apply, kind.cacheUpdate(command));
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
    return metrics.snapshot(local);
  }

  /** {@code <collection>.<domain>}: the range this Dendrite caches. */
  public String rangeName() {
    return rangeName;
  }

  /** Whether this Dendrite keeps results in its own memory (the near cache): see {@link Builder#nearCache}. */
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

  /** Appends buffered log records and gives the range up. Does not close the cache client. */
  @Override
  public void close() {
    if (local != null) {
      // Before the range is given up: its next owner's writes would leave these behind.
      local.dropAll();
    }
    try {
      index.flushLog();
    } finally {
      claim.close();
    }
  }

  private Interval<K> interval(K lowerBound, K upperBound) {
    return type.interval(lowerBound, upperBound, min, max);
  }

  /**
   * Configures a {@link Dendrite}.
   *
   * @param <K> the attribute's type
   * @param <R> the row type
   */
  public static final class Builder<K extends Comparable<? super K>, R> {
    private final DomainType<K> type;
    private final RowCodec<K, R> rows;
    private String collection;
    private String domain;
    private K min;
    private K max;
    private IqClient cache;
    private Coordinator coordinator = new LocalCoordinator();
    private WritePolicy policy = WritePolicy.WRITE_AROUND;
    private TypedWriteBuffer<K, ?> writeBuffer;
    private ChangeRecords<K, R, ?> changeRecords;
    private double beta = 1.0;
    private int alpha = 16;
    private Duration intervalLeaseLifetime = Duration.ofSeconds(10);
    private Duration intervalLeaseTimeout = Duration.ofSeconds(10);
    private boolean leasesEnabled = true;
    private boolean ownershipGuarded = true;
    private boolean repairLapsedWrites = true;
    private boolean dropCached;
    private long nearCacheBytes = DEFAULT_NEAR_CACHE_BYTES;
    private boolean writesDropNearCopies = true;
    private boolean nearOnlyCopiesDeleteServersCopies = true;

    private Builder(DomainType<K> type, RowCodec<K, R> rows) {
      this.type = Objects.requireNonNull(type, "type");
      this.rows = Objects.requireNonNull(rows, "rows");
    }

    /** The table (SQL) or collection (MongoDB) the predicates read. Required. */
    public Builder<K, R> collection(String name) {
      this.collection = RangeNames.check("collection", name);
      return this;
    }

    /** The attribute the predicates range over. Required. */
    public Builder<K, R> domain(String name) {
      this.domain = RangeNames.check("domain", name);
      return this;
    }

    /** The attribute's smallest and largest values (optional); bounds outside are refused. */
    public Builder<K, R> range(K min, K max) {
      K lower = type.cast("min", min);
      K upper = type.cast("max", max);
      if (lower.compareTo(upper) > 0) {
        throw new IllegalArgumentException("min " + lower + " is greater than max " + upper);
      }
      this.min = lower;
      this.max = upper;
      return this;
    }

    /** The IQ cache servers. Required. */
    public Builder<K, R> cache(IqClient client) {
      this.cache = Objects.requireNonNull(client, "cache");
      return this;
    }

    /**
     * Who owns which range; defaults to a {@link LocalCoordinator}, which claims the range in the cache tier and
     * refuses a second owner, here or in another process.
     */
    public Builder<K, R> coordinator(Coordinator coordinator) {
      this.coordinator = Objects.requireNonNull(coordinator, "coordinator");
      return this;
    }

    /**
     * Write-around (default) or write-through. Write-back is chosen with its buffer, {@link #writeBack}.
     *
     * @throws IllegalArgumentException for {@link WritePolicy#WRITE_BACK}, which needs its buffer
     */
    public Builder<K, R> writePolicy(WritePolicy policy) {
      Objects.requireNonNull(policy, "policy");
      if (policy == WritePolicy.WRITE_BACK) {
        throw new IllegalArgumentException(
            "policy WRITE_BACK needs the buffer its writes go to: use writeBack(buffer)");
      }
      this.policy = policy;
      return this;
    }

    /**
     * {@link WritePolicy#WRITE_BACK}: writes are buffered in {@code buffer} (the write-back module's {@code
     * RangeWriteBack}), which drains them to the data store later. The Dendrite writes only {@code commands}, each a
     * kind whose commands are changes the buffer holds (this signature checks it); a write of one ({@link
     * #write(Comparable, Comparable, Object, WriteCommand)}) hands its command to the buffer, and its {@link
     * WriteCommand#apply} is not used. A write of another kind is refused before anything changes.
     *
     * @throws IllegalArgumentException when {@code commands} is empty
     */
    public <C> Builder<K, R> writeBack(
        WriteBuffer<K, C> buffer, Collection<? extends WriteCommand<K, R, ? extends C>> commands) {
      this.writeBuffer = TypedWriteBuffer.of(buffer, commands);
      this.policy = WritePolicy.WRITE_BACK;
      return this;
    }

    /**
     * Keeps writes whose change is of {@code records}' type in the cached result sets they touch as appended change
     * records, one request per entry and no rewriting of result sets; such writes need no {@link CacheUpdate}.
     * Optional: without it, every write-through or write-back refresh reads and rewrites each entry.
     */
    public Builder<K, R> changeRecords(ChangeRecords<K, R, ?> records) {
      this.changeRecords = Objects.requireNonNull(records, "records");
      return this;
    }

    /**
     * The largest fraction of their rows two cached result sets may share, in [0, 1] (the CPR paper's β, default
     * 1): 0 caches every row once, as points; 1 caches each range's result whole, however much it overlaps others.
     */
    public Builder<K, R> maxSharedFraction(double beta) {
      if (!(beta >= 0 && beta <= 1)) {
        throw new IllegalArgumentException(
            "maxSharedFraction (beta) must be in [0, 1], got " + beta);
      }
      this.beta = beta;
      return this;
    }

    /** How many delete log records to batch per cache server (α, default 16). */
    public Builder<K, R> logBatch(int alpha) {
      if (alpha < 1) {
        throw new IllegalArgumentException("logBatch (alpha) must be at least 1, got " + alpha);
      }
      this.alpha = alpha;
      return this;
    }

    /**
     * How long an interval lease lives (so a dead holder cannot block forever) and how long to wait for
     * one before giving up with {@link DendriteBusyException} (defaults 10 s each).
     *
     * <p>A write whose data-store write takes longer than the lifetime (a row-lock wait, a stalled store) lets
     * overlapping gets query and cache the rows it has not changed yet. It stays correct: after its data-store write
     * it waits for those gets' fills to end (at most one lifetime) and drops every cached result overlapping its
     * interval, counted in {@link DendriteMetrics#writesOutlivingLease()}. Such writes cost the cache its results for
     * the interval, so keep the lifetime above the data store's slow writes.
     */
    public Builder<K, R> intervalLeases(Duration lifetime, Duration timeout) {
      if (lifetime == null || lifetime.isNegative() || lifetime.isZero()) {
        throw new IllegalArgumentException(
            "intervalLeases lifetime must be positive, got " + lifetime);
      }
      if (timeout == null || timeout.isNegative()) {
        throw new IllegalArgumentException(
            "intervalLeases timeout must be zero or more, got " + timeout);
      }
      this.intervalLeaseLifetime = lifetime;
      this.intervalLeaseTimeout = timeout;
      return this;
    }

    /**
     * Drops, when built, every cached result set the range's log records name, instead of serving them: for a
     * successor whose predecessor stopped without finishing its writes (its session ended, it was killed or paused).
     * Such a write may have changed the data store and left, under its lease, a cached result older than that: the
     * IQ servers drop it when the lease lapses, but a successor may serve before then, and a write whose statement
     * outlived its lease may have left a fill from before the statement. Default false: the predecessor handed the
     * range over after its writes ended.
     */
    public Builder<K, R> dropCachedOnBuild(boolean drop) {
      this.dropCached = drop;
      return this;
    }

    /**
     * Whether the range's owner keeps the decoded rows of its cached results in its own heap too (the near cache, L1,
     * in front of the cache servers), so that a hit costs no round trip. On by default; it is used only where this
     * process owns the range alone and can show it does ({@link Coordinator.RangeClaim#mayKeepResultsInMemory}):
     * {@link LocalCoordinator}'s claim. Every write of the range runs here, drops the copies it changes before it
     * changes them in the cache servers, and a copy read before a write can never be kept after it: a near-cache hit
     * is never older than an acknowledged write. Off: every hit reads the cache servers.
     */
    public Builder<K, R> nearCache(boolean on) {
      return nearCacheMaxBytes(on ? DEFAULT_NEAR_CACHE_BYTES : 0);
    }

    /**
     * The near cache's bound, in bytes of the results it holds as the cache servers encode them (default 64 MiB; the
     * decoded rows take more heap, by how much depends on the row type). 0 turns it off.
     */
    public Builder<K, R> nearCacheMaxBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException(
            "nearCacheMaxBytes must be 0 (off) or more, got " + bytes);
      }
      this.nearCacheBytes = bytes;
      return this;
    }

    /**
     * Test-only: claims the range from the coordinator without the cache tier, as before the ownership guard, to show
     * that two owners of one range serve stale results.
     */
    Builder<K, R> withoutOwnershipGuardForTesting() {
      this.ownershipGuarded = false;
      return this;
    }

    /**
     * Test-only: a write whose interval lease lapsed before its data-store write ended returns without dropping what
     * gets cached meanwhile, to show that {@code SlowWriteIT} catches the stale reads that leaves.
     */
    Builder<K, R> withoutLapsedWriteRepairForTesting() {
      this.repairLapsedWrites = false;
      return this;
    }

    /**
     * Test-only: writes leave the near cache's copies alone, to show that the consistency checker catches the stale
     * hits that serves.
     */
    Builder<K, R> nearCacheNotDroppedByWritesForTesting() {
      this.writesDropNearCopies = false;
      return this;
    }

    /**
     * Test-only: a result a write keeps in the near cache alone keeps its old copy in the cache servers too, to show
     * that the consistency checker catches the stale hits that serves once the near copy is gone.
     */
    Builder<K, R> nearOnlyCopiesKeepServersCopiesForTesting() {
      this.nearOnlyCopiesDeleteServersCopies = false;
      return this;
    }

    /** Test-only: turns every lease off, to show that the consistency checker catches stale reads. */
    Builder<K, R> withoutLeasesForTesting() {
      this.leasesEnabled = false;
      return this;
    }

    /**
     * Builds the Dendrite: claims the range from the coordinator and rebuilds PrInT from the range's
     * log records in the cache before returning.
     *
     * @throws IllegalStateException if a required setting is missing or the range is owned elsewhere
     */
    public Dendrite<K, R> build() {
      checkSettings();
      return new Dendrite<>(this);
    }

    /**
     * Builds the {@link CachedReads} of this range: what a process that does not own it reads from the cache. It
     * claims nothing and keeps no PrInT.
     *
     * @throws IllegalStateException if a required setting is missing
     */
    public CachedReads<K, R> buildReads() {
      checkSettings();
      return new CachedReads<>(
          type,
          cache,
          new CacheKeys<>(collection, domain, type),
          new CachedRows<>(rows, changeRecords));
    }

    private void checkSettings() {
      if (writeBuffer != null && policy != WritePolicy.WRITE_BACK) {
        throw new IllegalStateException(
            "writeBack(buffer) and writePolicy(" + policy + ") conflict: choose one");
      }
      if (collection == null || domain == null || cache == null) {
        throw new IllegalStateException("collection, domain and cache are required");
      }
    }
  }
}
