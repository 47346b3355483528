package io.dendrite.core;

import io.dendrite.core.interval.Interval;
import io.dendrite.core.interval.IntervalLease;
import io.dendrite.core.interval.IntervalLeases;
import io.dendrite.core.interval.LeaseMode;
import io.dendrite.core.log.PredicateLog;
import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.Flight;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.RefreshLease;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import io.dendrite.iq.client.WriteOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Caches the result sets of range predicates on one attribute of one collection ({@code WHERE attr
 * BETWEEN lb AND ub}) and keeps them strongly consistent with the data store: no get returns a value
 * older than the last acknowledged write (the CPR paper, Figure 3).
 *
 * <p>A {@link #get get} is answered from the cache when a cached entry (or set of entries) covers its
 * interval; otherwise it takes the entry's I lease in the cache server and a Shared lease on the
 * interval in process (LeMInT), queries the data store, stores the result and registers its interval
 * in PrInT. A write ({@link #insert}, {@link #update}, {@link #delete}) takes an eXclusive lease on
 * the interval it touches, finds every cached entry whose interval overlaps it, and deletes
 * ({@link WritePolicy#WRITE_AROUND}) or updates ({@link WritePolicy#WRITE_THROUGH}) them under Q leases
 * around the data store write; {@link WritePolicy#WRITE_BACK} updates them and hands the change to a
 * {@link WriteBuffer} instead of the data store, and a missing get applies the overlapping buffered writes
 * first.
 *
 * <p>β bounds the data two cached result sets may share, relative to the smaller one: 1 caches each
 * predicate as its own entry; 0 caches result sets as one entry per attribute value (points) that gets
 * assemble with one multi-get; in between, caching a result set first drops the entries it would
 * duplicate by more than β. A get whose interval lies inside a cached entry's is answered from it.
 *
 * <p>Bounds are inclusive. Thread-safe; one Dendrite per range and process (the {@link Coordinator}
 * enforces it).
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
public final class Dendrite<K extends Comparable<? super K>, R> implements AutoCloseable {
  /** After how many appended change records a write rewrites a cached entry whole (see {@link ChangeRecords}). */
  static final int RECORDS_BEFORE_REWRITE = 16;

  private final DomainType<K> type;
  private final K min;
  private final K max;
  private final IqClient cache;
  private final WritePolicy policy;
  private final WriteBuffer<K> writeBuffer;
  private final double beta;
  private final RowCodec<K, R> rows;
  private final ResultSetCodec<R> resultSets;
  private final ChangeRecords<K, R, ?> changeRecords;
  private final IntervalLeases<K> intervalLeases;
  private final Duration intervalLeaseTimeout;
  private final EntryIndex<K> index;
  private final CacheOutage outage;
  private final Coordinator.RangeClaim claim;
  private final boolean leasesEnabled;
  private final DendriteCounters metrics = new DendriteCounters();

  private Dendrite(Builder<K, R> builder) {
    this.type = builder.type;
    this.min = builder.min;
    this.max = builder.max;
    this.cache = builder.cache;
    this.policy = builder.policy;
    this.writeBuffer = builder.writeBuffer;
    this.beta = builder.beta;
    this.rows = builder.rows;
    this.resultSets = new ResultSetCodec<>(rows);
    this.changeRecords = builder.changeRecords;
    this.intervalLeases = new IntervalLeases<>(builder.intervalLeaseLifetime);
    this.intervalLeaseTimeout = builder.intervalLeaseTimeout;
    this.leasesEnabled = builder.leasesEnabled;
    this.outage = new CacheOutage(cache);
    CacheKeys<K> keys = new CacheKeys<>(builder.collection, builder.domain, type);
    this.claim = builder.coordinator.claim(builder.collection, builder.domain);
    try {
      this.index =
          new EntryIndex<>(type, keys, new PredicateLog(cache, keys::logKey, builder.alpha));
      index.rebuild();
    } catch (RuntimeException e) {
      claim.close();
      throw e;
    }
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
   * @throws DataStoreException if {@code query} threw a checked exception (nothing was cached)
   * @throws DendriteBusyException if conflicting writes held the interval past the lease timeout
   */
  public List<R> get(K lowerBound, K upperBound, RangeQuery<K, R> query) {
    Interval<K> interval = interval(lowerBound, upperBound);
    Objects.requireNonNull(query, "query");
    RoundTrips trips = new RoundTrips();
    Optional<List<R>> cached = lookup(interval, trips);
    if (cached.isPresent()) {
      metrics.hits.increment();
      metrics.completed(DendriteCounters.Operation.GET_HIT, trips.count());
      return cached.get();
    }
    metrics.misses.increment();
    try {
      return fill(interval, query, trips);
    } finally {
      metrics.completed(DendriteCounters.Operation.GET_MISS, trips.count());
    }
  }

  /**
   * Inserts: applies {@code change} to the data store with {@code apply} and deletes or updates (with
   * {@code cacheUpdate}) every cached result set whose interval overlaps [{@code lowerBound},
   * {@code upperBound}], the interval the insert touches.
   *
   * @param cacheUpdate how the insert changes a cached result set; unused by write-around, and may be null when
   *     {@code change} is of the type of the Builder's {@link Builder#changeRecords ChangeRecords}
   * @throws IllegalArgumentException for bad bounds, as {@link #get}
   * @throws DataStoreException if {@code apply} threw a checked exception (the cache is left consistent)
   */
  public <C> void insert(
      K lowerBound,
      K upperBound,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate) {
    write(lowerBound, upperBound, change, apply, cacheUpdate);
  }

  /** Updates; see {@link #insert}. */
  public <C> void update(
      K lowerBound,
      K upperBound,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate) {
    write(lowerBound, upperBound, change, apply, cacheUpdate);
  }

  /** Deletes; see {@link #insert}. */
  public <C> void delete(
      K lowerBound,
      K upperBound,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate) {
    write(lowerBound, upperBound, change, apply, cacheUpdate);
  }

  /** What this Dendrite has done so far, copied now. */
  public DendriteMetrics metrics() {
    return metrics.snapshot();
  }

  /** The number of cached result sets registered in PrInT. */
  public int cachedEntries() {
    return index.size();
  }

  /** Test-only: see {@link EntryIndex#afterCoverageLookForTesting}. */
  void afterCoverageLookForTesting(Runnable hook) {
    index.afterCoverageLookForTesting(hook);
  }

  /** Appends buffered log records and gives the range up. Does not close the cache client. */
  @Override
  public void close() {
    try {
      index.flushLog();
    } finally {
      claim.close();
    }
  }

  // ------------------------------------------------------------------------------------------ get

  private Optional<List<R>> lookup(Interval<K> interval, RoundTrips trips) {
    Optional<List<EntryIndex.Entry<K>>> plan = index.plan(interval);
    if (plan.isEmpty()) {
      return Optional.empty();
    }
    List<EntryIndex.Entry<K>> entries = plan.get();
    if (entries.isEmpty()) {
      return Optional.of(List.of());
    }
    List<String> keys = entries.stream().map(EntryIndex.Entry::key).toList();
    if (!outage.settle(keys, trips)) {
      return Optional.empty();
    }
    Map<String, CacheValue> values;
    try {
      trips.add(1);
      values =
          keys.size() == 1
              ? cache.get(keys.get(0)).map(value -> Map.of(keys.get(0), value)).orElse(Map.of())
              : cache.getAll(keys);
    } catch (IqException unreachable) {
      return Optional.empty();
    }
    if (values.size() < keys.size()) {
      for (EntryIndex.Entry<K> entry : entries) {
        if (!values.containsKey(entry.key())) {
          drop(entry, trips);
        }
      }
      return Optional.empty();
    }
    List<R> found = new ArrayList<>();
    for (EntryIndex.Entry<K> entry : entries) {
      found.addAll(rowsOf(entry, values.get(entry.key()).data()));
    }
    return Optional.of(normalize(interval, found));
  }

  private List<R> fill(Interval<K> interval, RangeQuery<K, R> query, RoundTrips trips) {
    String key = index.keyOf(interval);
    boolean cacheReachable = outage.settle(List.of(key), trips);
    LeaseHandle inhibit = null;
    if (cacheReachable && leasesEnabled) {
      try {
        trips.add(1);
        ReadResult read = cache.read(key);
        if (read instanceof ReadResult.Leased leased) {
          inhibit = leased.lease();
        } else if (read instanceof ReadResult.Hit hit && index.isRegistered(interval, key)) {
          return normalize(
              interval, rowsOf(new EntryIndex.Entry<>(interval, key), hit.value().data()));
        }
      } catch (IqException unreachable) {
        cacheReachable = false;
      }
    }
    IntervalLease<K> shared = leasesEnabled ? acquire(interval, LeaseMode.SHARED) : null;
    try {
      if (writeBuffer != null) {
        // Under the Shared lease no overlapping write can be buffered until the query returns.
        writeBuffer.applyOverlapping(interval);
      }
      List<R> result =
          normalize(interval, call(() -> query.query(interval.lo(), interval.hi()), "query"));
      if (!cacheReachable) {
        metrics.cacheUnavailable.increment();
      } else if (shared == null || !shared.isExpired()) {
        // An expired Shared lease may have let a write through: then the result must not be cached.
        store(interval, key, result, inhibit, shared, trips);
      }
      return result;
    } finally {
      if (inhibit != null) {
        inhibit.close();
      }
      if (shared != null) {
        shared.close();
      }
    }
  }

  private void store(
      Interval<K> interval,
      String key,
      List<R> result,
      LeaseHandle inhibit,
      IntervalLease<K> shared,
      RoundTrips trips) {
    try {
      if (beta == 0) {
        storePoints(interval, result, shared, trips);
        return;
      }
      if (beta < 1) {
        dropOverDuplicated(interval, result, trips);
      }
      if (leasesEnabled && inhibit == null) {
        return;
      }
      byte[] value = resultSets.encode(result);
      trips.add(2);
      addWhileHeld(
          interval,
          key,
          result.size(),
          () -> (leasesEnabled ? inhibit.fill(value) : cache.set(key, value)) == Outcome.OK,
          shared,
          trips);
    } catch (IqException unreachable) {
      metrics.cacheUnavailable.increment();
    }
  }

  /**
   * Registers what a filler stored only while its Shared lease still excludes writers (soak finding 8): a writer
   * let in by a lapsed lease found nothing registered to invalidate, so the fill's result may predate its write.
   */
  private Predicate<Runnable> whileHeld(IntervalLease<K> shared) {
    return register -> {
      if (shared == null) {
        register.run();
        return true;
      }
      return shared.runIfUnexpired(register);
    };
  }

  /**
   * {@link EntryIndex#add} while the filler's lease holds; a value it stored but could not register because the
   * lease lapsed is deleted, as nobody may trust it.
   *
   * @return whether the entry is now cached and registered
   */
  private boolean addWhileHeld(
      Interval<K> interval,
      String key,
      int rows,
      BooleanSupplier store,
      IntervalLease<K> shared,
      RoundTrips trips) {
    if (index.add(interval, key, rows, store, whileHeld(shared))) {
      return true;
    }
    if (shared != null && shared.isExpired()) {
      try {
        trips.add(1);
        cache.delete(key);
      } catch (IqException unreachable) {
        outage.owe(key);
      }
    }
    return false;
  }

  /** β = 0: one entry per attribute value; the interval is marked covered if every point was stored. */
  private void storePoints(
      Interval<K> interval, List<R> result, IntervalLease<K> shared, RoundTrips trips) {
    Map<K, List<R>> byPoint = new TreeMap<>();
    for (R row : result) {
      byPoint.computeIfAbsent(rows.attributeOf(row), point -> new ArrayList<>()).add(row);
    }
    boolean complete = true;
    List<EntryIndex.Entry<K>> points = new ArrayList<>();
    for (Map.Entry<K, List<R>> point : byPoint.entrySet()) {
      Interval<K> pointInterval = Interval.point(point.getKey());
      String key = index.keyOf(pointInterval);
      points.add(new EntryIndex.Entry<>(pointInterval, key));
      byte[] value = resultSets.encode(point.getValue());
      if (!leasesEnabled) {
        trips.add(2);
        complete &=
            addWhileHeld(
                pointInterval,
                key,
                point.getValue().size(),
                () -> cache.set(key, value) == Outcome.OK,
                shared,
                trips);
        continue;
      }
      trips.add(1);
      // One attempt: a point another filler holds the I lease of is being cached by it; waiting for
      // that would only delay this get, and the interval simply stays uncovered.
      ReadResult read = cache.tryRead(key);
      if (read instanceof ReadResult.Leased leased) {
        try (LeaseHandle inhibit = leased.lease()) {
          trips.add(2);
          complete &=
              addWhileHeld(
                  pointInterval,
                  key,
                  point.getValue().size(),
                  () -> inhibit.fill(value) == Outcome.OK,
                  shared,
                  trips);
        }
      } else if (read instanceof ReadResult.Hit) {
        if (!index.isRegistered(pointInterval, key)) {
          // A value nobody registered cannot be trusted to be current: remove it.
          trips.add(1);
          cache.delete(key);
          complete = false;
        }
      } else {
        complete = false;
      }
    }
    if (complete) {
      trips.add(1);
      index.cover(interval, points, whileHeld(shared));
    }
  }

  /** 0 < β < 1: drops the cached entries that {@code result} would duplicate by more than β. */
  private void dropOverDuplicated(Interval<K> interval, List<R> result, RoundTrips trips) {
    for (EntryIndex.Entry<K> entry : index.impactedBy(interval)) {
      if (entry.interval().equals(interval)) {
        continue;
      }
      long shared =
          result.stream()
              .filter(row -> entry.interval().contains(Interval.point(rows.attributeOf(row))))
              .count();
      double duplicated =
          index.rowCount(entry.key()).stream()
              .mapToDouble(
                  count ->
                      Math.min(count, result.size()) == 0
                          ? 0
                          : (double) shared / Math.min(count, result.size()))
              .findFirst()
              .orElse(1.0); // unknown size (rebuilt from the log): assume the worst
      if (duplicated > beta) {
        drop(entry, trips);
      }
    }
  }

  /** Unregisters first, deletes second: see {@link EntryIndex}. */
  private void drop(EntryIndex.Entry<K> entry, RoundTrips trips) {
    index.remove(entry);
    try {
      trips.add(1);
      cache.delete(entry.key());
    } catch (IqException unreachable) {
      outage.owe(entry.key());
    }
  }

  // ---------------------------------------------------------------------------------------- write

  private <C> void write(
      K lowerBound,
      K upperBound,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate) {
    Interval<K> interval = interval(lowerBound, upperBound);
    if (writeBuffer != null) {
      writeBuffer.check(change);
    } else {
      Objects.requireNonNull(apply, "apply");
    }
    if (policy != WritePolicy.WRITE_AROUND
        && cacheUpdate == null
        && (changeRecords == null || !changeRecords.changeType().isInstance(change))) {
      throw new NullPointerException(
          "cacheUpdate is required for a change that is not a "
              + (changeRecords == null
                  ? "ChangeRecords change (none configured)"
                  : changeRecords.changeType().getName()));
    }
    RoundTrips trips = new RoundTrips();
    try {
      if (!leasesEnabled) {
        writeWithoutLeases(interval, change, apply, cacheUpdate, trips);
      } else {
        // A flight: the cache requests of each step of the write (the leases, the log record and
        // the buffered
        // writes' reads; then the buffered writes, listings, swaps and commit) go out in one write
        // per server, when
        // the write first waits for a reply. Nothing in the write waits for anything but its own
        // replies while a
        // request is held: the data store is written after the leases' replies are in.
        try (IntervalLease<K> exclusive = acquire(interval, LeaseMode.EXCLUSIVE);
            Flight flight = cache.flight()) {
          if (policy == WritePolicy.WRITE_AROUND) {
            writeAround(interval, change, apply, trips);
          } else {
            writeThrough(interval, change, apply, cacheUpdate, trips);
          }
        }
      }
      metrics.writes.increment();
    } finally {
      metrics.completed(DendriteCounters.Operation.WRITE, trips.count());
    }
  }

  private <C> void writeAround(
      Interval<K> interval, C change, ChangeApplier<? super C> apply, RoundTrips trips) {
    List<EntryIndex.Entry<K>> impacted = index.impactedBy(interval);
    index.uncoverOverlapping(interval);
    try (Transaction transaction = cache.beginTransaction()) {
      boolean quarantined = false;
      // All in flight at once: one round trip however many entries the write touches.
      List<CompletableFuture<Outcome>> quarantines = new ArrayList<>();
      for (EntryIndex.Entry<K> entry : impacted) {
        index.remove(entry);
        trips.add(1);
        quarantines.add(transaction.quarantineOnce(entry.key()));
      }
      for (int i = 0; i < impacted.size(); i++) {
        try {
          await(quarantines.get(i));
          quarantined = true;
        } catch (IqConnectionException unreachable) {
          metrics.cacheUnavailable.increment();
          outage.owe(impacted.get(i).key());
        }
      }
      try {
        run(() -> apply.apply(change), "apply");
      } finally {
        // Also when the data store write failed: the entries are unregistered, so their values must
        // go.
        if (quarantined) {
          trips.add(transaction.servers().size());
          settleEnd(transaction.deleteAndRelease(), impacted);
        }
      }
      metrics.entriesInvalidated.add(impacted.size());
    }
  }

  private <C> void writeThrough(
      Interval<K> interval,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate,
      RoundTrips trips) {
    List<EntryIndex.Entry<K>> targets = new ArrayList<>(index.impactedBy(interval));
    boolean point = interval.lo().compareTo(interval.hi()) == 0;
    EntryIndex.Entry<K> newPoint = null;
    if (point && targets.isEmpty() && index.isCovered(interval)) {
      // A write at an attribute value the covered interval had no row for: create its point entry,
      // logged before it exists. If it cannot be logged, the interval stops being covered instead.
      trips.add(1);
      if (index.announce(interval, index.keyOf(interval))) {
        newPoint = new EntryIndex.Entry<>(interval, index.keyOf(interval));
        targets.add(newPoint);
      } else {
        index.uncoverOverlapping(interval);
      }
    } else if (!point) {
      index.uncoverOverlapping(interval);
    }
    // Encoded only for a write that touches cached results: most writes touch none.
    byte[] record = targets.isEmpty() ? null : changeRecordOf(change);
    Map<EntryIndex.Entry<K>, byte[]> appends = new LinkedHashMap<>();
    if (record != null) {
      for (EntryIndex.Entry<K> entry : targets) {
        if (entry != newPoint && index.changeRecords(entry.key()) < RECORDS_BEFORE_REWRITE) {
          appends.put(entry, record);
        }
      }
    }
    if (writeBuffer != null && appends.size() == targets.size()) {
      writeBackInOneTrip(interval, change, targets, record, trips);
      return;
    }
    CacheUpdate<K, R> update = cacheUpdateOf(change, cacheUpdate);
    // Write-back sends its buffer's first requests (log record, reads of the buffered writes) with
    // the leases.
    WriteBuffer.Started buffering =
        writeBuffer == null ? null : writeBuffer.start(interval, change);
    LeasedTargets leased;
    try {
      leased = leaseTargets(cache.beginTransaction(), targets, appends, trips, buffering);
    } catch (RuntimeException failed) {
      if (buffering != null) {
        buffering.abandon();
      }
      throw failed;
    }
    if (leased.waited() && buffering != null) {
      buffering =
          writeBuffer.start(interval, change); // abandoned while waiting for another writer's lease
    }
    try (Transaction transaction = leased.transaction()) {
      Map<EntryIndex.Entry<K>, List<R>> staged = new LinkedHashMap<>();
      Map<EntryIndex.Entry<K>, CompletableFuture<Outcome>> swaps = new LinkedHashMap<>();
      List<CompletableFuture<Outcome>> stagedDeletes = new ArrayList<>();
      List<EntryIndex.Entry<K>> emptied = new ArrayList<>();
      List<EntryIndex.Entry<K>> appended = new ArrayList<>();
      // The new values are all computed first (a cache-update function that throws changes nothing)
      // and sent after
      // the buffer's second step, so that step needs no reply that arrives after them.
      Map<EntryIndex.Entry<K>, Runnable> sendSwaps = new LinkedHashMap<>();
      for (int i = 0; i < targets.size(); i++) {
        EntryIndex.Entry<K> entry = targets.get(i);
        TargetLease result = leased.results().get(i);
        if (result == null) {
          continue; // its server is unreachable: dropped and owed a delete
        }
        if (result instanceof TargetLease.Appended) {
          appended.add(entry);
          continue;
        }
        RefreshLease lease = ((TargetLease.Refresh) result).lease();
        if (lease.current().isEmpty() && entry != newPoint) {
          continue; // evicted: the commit leaves it absent and the next get refills it
        }
        List<R> before =
            lease.current().map(value -> rowsOf(entry, value.data())).orElse(List.of());
        List<R> after =
            normalize(
                entry.interval(),
                update.apply(entry.interval(), Collections.unmodifiableList(before)));
        boolean isPoint = entry.interval().lo().compareTo(entry.interval().hi()) == 0;
        trips.add(1);
        if (after.isEmpty() && isPoint) {
          // stages a delete: a point without rows has no entry
          sendSwaps.put(
              entry, () -> stagedDeletes.add(lease.swapAsync(new byte[0], WriteOptions.DEFAULT)));
          emptied.add(entry);
        } else {
          staged.put(entry, after);
          byte[] value = resultSets.encode(after);
          sendSwaps.put(
              entry, () -> swaps.put(entry, lease.swapAsync(value, WriteOptions.DEFAULT)));
        }
      }
      Map<EntryIndex.Entry<K>, List<R>> refreshed = new LinkedHashMap<>();
      WriteBuffer.Stored stored = null;
      boolean allStaged = true;
      try {
        if (buffering == null) {
          sendSwaps.values().forEach(Runnable::run);
          allStaged = awaitSwaps(stagedDeletes, swaps, staged, refreshed);
          run(() -> apply.apply(change), "apply");
        } else {
          stored = buffering.store();
          // Not awaited before the commit: they reach each server before the commit sent after
          // them.
          sendSwaps.values().forEach(Runnable::run);
        }
      } catch (RuntimeException failed) {
        if (buffering != null) {
          buffering.abandon(); // nothing buffered yet (a no-op once stored had thrown)
        }
        if (!transaction.servers().isEmpty()) {
          trips.add(transaction.servers().size());
          transaction.release(); // the data store is unchanged: keep the old values
        }
        throw failed;
      }
      CompletableFuture<Outcome> committing = null;
      try {
        emptied.forEach(index::remove);
        if (!transaction.servers().isEmpty()) {
          trips.add(transaction.servers().size());
          // Under write-back the commit goes out with the buffered writes: one round trip for both.
          committing = transaction.commitAsync();
        }
      } finally {
        if (stored != null) {
          awaitStored(stored, committing, targets, trips); // also ends what the buffer holds
        }
      }
      Outcome end = committing == null ? Outcome.OK : committing.join();
      if (buffering != null) {
        try {
          allStaged = awaitSwaps(stagedDeletes, swaps, staged, refreshed);
        } catch (IqException lost) {
          allStaged = false; // the write is buffered; what the swap's server holds is unknown
        }
      }
      if (!allStaged || end != Outcome.OK) {
        settleEnd(Outcome.STATE_LOST, targets); // dropped: nothing to register
        return;
      }
      for (Map.Entry<EntryIndex.Entry<K>, List<R>> entry : refreshed.entrySet()) {
        if (entry.getKey() == newPoint) {
          index.register(newPoint.interval(), newPoint.key(), entry.getValue().size());
        } else {
          index.updateRowCount(entry.getKey().key(), entry.getValue().size());
        }
      }
      appended.forEach(entry -> index.addChangeRecord(entry.key()));
      metrics.entriesRefreshed.add(refreshed.size() + appended.size());
    }
  }

  /**
   * Write-back when every cached result the write touches takes its change record (none is rewritten whole): the
   * appends, the buffer's requests (log record, buffered writes, listings) and the commit go out in one flight, so
   * the write awaits one round trip. The appends and the commit share each server's ordered connection, so the
   * commit applies the appends that were granted. A result whose append was refused (another writer holds its Q
   * lease, or the value would outgrow the item size) is dropped instead, unregistered first: the commit went out
   * before the refusal was known. Until the write returns, a reader may find it on some results and not yet on
   * others, as when its commit reaches one server before another; once it returns, every result it touched has it
   * or is gone.
   */
  private <C> void writeBackInOneTrip(
      Interval<K> interval,
      C change,
      List<EntryIndex.Entry<K>> targets,
      byte[] record,
      RoundTrips trips) {
    WriteBuffer.Started buffering = writeBuffer.start(interval, change);
    try (Transaction transaction = cache.beginTransaction()) {
      List<CompletableFuture<Outcome>> appending = new ArrayList<>();
      try {
        for (EntryIndex.Entry<K> entry : targets) {
          trips.add(1);
          appending.add(transaction.appendOnce(entry.key(), record));
        }
      } catch (RuntimeException failed) {
        buffering.abandon();
        throw failed; // the transaction's close releases what was appended
      }
      WriteBuffer.Stored stored =
          buffering.store(); // when it throws nothing is buffered: close releases the appends
      CompletableFuture<Outcome> committing = null;
      if (!transaction.servers().isEmpty()) {
        trips.add(transaction.servers().size());
        committing = transaction.commitAsync();
      }
      awaitStored(
          stored, committing, targets, trips); // the first wait: the whole flight goes out here
      Outcome end = committing == null ? Outcome.OK : committing.join();
      List<EntryIndex.Entry<K>> appended = new ArrayList<>();
      for (int i = 0; i < targets.size(); i++) {
        EntryIndex.Entry<K> entry = targets.get(i);
        CompletableFuture<Outcome> append = appending.get(i);
        Outcome outcome = unlessUnreachable(entry, () -> await(append));
        if (outcome == Outcome.OK) {
          appended.add(entry);
        } else if (outcome != null) {
          drop(
              entry,
              trips); // ABORTED, NOT_STORED, or STATE_LOST (which fails the commit too: see below)
        }
      }
      if (end != Outcome.OK) {
        // Also NOT_FOUND where every append to a server was refused (nothing to commit there):
        // dropped already.
        settleEnd(Outcome.STATE_LOST, appended);
        return;
      }
      appended.forEach(entry -> index.addChangeRecord(entry.key()));
      metrics.entriesRefreshed.add(appended.size());
    }
  }

  /**
   * Waits for the staged deletes and swaps; the targets whose swap was staged go into {@code refreshed}.
   *
   * @return whether every one was staged: a target whose swap was refused (its lease lapsed) would keep its old
   *     value through the commit, so the caller drops them all then
   */
  private boolean awaitSwaps(
      List<CompletableFuture<Outcome>> stagedDeletes,
      Map<EntryIndex.Entry<K>, CompletableFuture<Outcome>> swaps,
      Map<EntryIndex.Entry<K>, List<R>> staged,
      Map<EntryIndex.Entry<K>, List<R>> refreshed) {
    boolean all = true;
    for (CompletableFuture<Outcome> delete : stagedDeletes) {
      all &= await(delete) == Outcome.OK;
    }
    for (Map.Entry<EntryIndex.Entry<K>, CompletableFuture<Outcome>> swap : swaps.entrySet()) {
      if (await(swap.getValue()) == Outcome.OK) {
        refreshed.put(swap.getKey(), staged.get(swap.getKey()));
      } else {
        all = false;
      }
    }
    return all;
  }

  /**
   * Waits for the buffered writes that went out with the commit. When they failed the write is not acknowledged,
   * yet the refreshed results may be committed: they must not be served, so every target is dropped.
   */
  private void awaitStored(
      WriteBuffer.Stored stored,
      CompletableFuture<Outcome> committing,
      List<EntryIndex.Entry<K>> targets,
      RoundTrips trips) {
    try {
      stored.await();
    } catch (RuntimeException failed) {
      if (committing != null) {
        committing.join();
      }
      targets.forEach(entry -> drop(entry, trips));
      throw failed;
    }
  }

  /** What a write holds on one target: its Q-refresh lease with the current value, or an append staged under one. */
  private sealed interface TargetLease {
    record Refresh(RefreshLease lease) implements TargetLease {}

    record Appended() implements TargetLease {}
  }

  /**
   * The transaction holding the targets' Q leases, what it holds on each target (null: server unreachable), and
   * whether it had to wait for another writer (the write buffer's started write was abandoned then).
   */
  private record LeasedTargets(
      Transaction transaction, List<TargetLease> results, boolean waited) {}

  /**
   * Takes the Q lease of every target with all the requests in flight at once, so a write pays one round trip of
   * latency for them however many cached results it refreshes: a target in {@code appends} gets its change record
   * appended under a Q-incremental lease in the same request ({@code iqappend}), the others are read under a
   * Q-refresh lease ({@code qaread}) to be rewritten. When another writer holds one of them (or an append would make
   * a value too large), what was got is given back and a fresh transaction reads every target under a Q-refresh
   * lease, one at a time, in the index's order, waiting with backoff: two writers that each got part of the other's
   * keys at once would otherwise wait for each other. A target whose server is unreachable is dropped, owed a
   * delete, and has a null result.
   */
  private LeasedTargets leaseTargets(
      Transaction transaction,
      List<EntryIndex.Entry<K>> targets,
      Map<EntryIndex.Entry<K>, byte[]> appends,
      RoundTrips trips,
      WriteBuffer.Started buffering) {
    try {
      List<CompletableFuture<?>> requests = new ArrayList<>();
      for (EntryIndex.Entry<K> entry : targets) {
        trips.add(1);
        byte[] record = appends.get(entry);
        requests.add(
            record != null
                ? transaction.appendOnce(entry.key(), record)
                : transaction.readForUpdateOnce(entry.key()));
      }
      List<TargetLease> results = new ArrayList<>();
      boolean busy = false;
      for (int i = 0; i < targets.size(); i++) {
        CompletableFuture<?> request = requests.get(i);
        Object reply = unlessUnreachable(targets.get(i), () -> await(request));
        if (reply instanceof RefreshResult.Granted granted) {
          results.add(new TargetLease.Refresh(granted.lease()));
        } else if (reply == Outcome.OK || reply == Outcome.STATE_LOST) {
          results.add(
              new TargetLease
                  .Appended()); // a lost server's state fails the commit, which drops the targets
        } else if (reply == null) {
          results.add(null);
        } else {
          busy = true; // Busy, ABORTED, or NOT_STORED: the value would outgrow the item size
          results.add(null);
        }
      }
      if (!busy) {
        return new LeasedTargets(transaction, results, false);
      }
    } catch (RuntimeException failed) {
      transaction.close();
      throw failed;
    }
    transaction.release();
    if (buffering != null) {
      buffering.abandon(); // what it holds (its documents' locks) must not wait with us: the other
      // writer may need it
    }
    Transaction oneByOne = cache.beginTransaction();
    try {
      List<TargetLease> results = new ArrayList<>();
      for (EntryIndex.Entry<K> entry : targets) {
        trips.add(1);
        RefreshResult result = unlessUnreachable(entry, () -> oneByOne.readForUpdate(entry.key()));
        if (result instanceof ReadResult.Busy) {
          throw new DendriteBusyException(
              "another process holds the Q lease of " + entry.key(), null);
        }
        results.add(
            result == null
                ? null
                : new TargetLease.Refresh(((RefreshResult.Granted) result).lease()));
      }
      return new LeasedTargets(oneByOne, results, true);
    } catch (RuntimeException failed) {
      oneByOne.close();
      throw failed;
    }
  }

  /** The lease request's result, or null after dropping the entry when its server cannot be reached. */
  private <T> T unlessUnreachable(EntryIndex.Entry<K> entry, Supplier<T> request) {
    try {
      return request.get();
    } catch (IqConnectionException unreachable) {
      metrics.cacheUnavailable.increment();
      index.remove(entry);
      outage.owe(entry.key());
      return null;
    }
  }

  /** The reply to a pipelined request, its failure unwrapped (a lost server is an {@link IqConnectionException}). */
  private static <T> T await(CompletableFuture<T> reply) {
    try {
      return reply.join();
    } catch (CompletionException failed) {
      throw failed.getCause() instanceof IqException iq ? iq : failed;
    }
  }

  /** Write-back hands the change to the buffer; the other policies apply it to the data store now. */
  private <C> void persist(Interval<K> interval, C change, ChangeApplier<? super C> apply) {
    if (writeBuffer != null) {
      writeBuffer.buffer(interval, change);
    } else {
      run(() -> apply.apply(change), "apply");
    }
  }

  /**
   * A transaction whose end did not apply everywhere (a tid record expired, a server restarted or went
   * away) may have left old values behind: drop every entry it touched.
   */
  private void settleEnd(Outcome end, Collection<EntryIndex.Entry<K>> touched) {
    if (end == Outcome.OK) {
      return;
    }
    for (EntryIndex.Entry<K> entry : touched) {
      drop(entry, new RoundTrips());
    }
  }

  /** The negative control: the same work without I/Q or interval leases (tests only). */
  private <C> void writeWithoutLeases(
      Interval<K> interval,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate,
      RoundTrips trips) {
    persist(interval, change, apply);
    for (EntryIndex.Entry<K> entry : index.impactedBy(interval)) {
      trips.add(1);
      if (policy == WritePolicy.WRITE_AROUND) {
        index.remove(entry);
        cache.delete(entry.key());
        continue;
      }
      Optional<CacheValue> current = cache.get(entry.key());
      if (current.isPresent()) {
        trips.add(1);
        List<R> after =
            normalize(
                entry.interval(),
                cacheUpdateOf(change, cacheUpdate)
                    .apply(entry.interval(), rowsOf(entry, current.get().data())));
        cache.set(entry.key(), resultSets.encode(after));
      }
    }
    index.uncoverOverlapping(interval);
  }

  // -------------------------------------------------------------------------------------- helpers

  private Interval<K> interval(K lowerBound, K upperBound) {
    K lower = type.cast("lowerBound", lowerBound);
    K upper = type.cast("upperBound", upperBound);
    if (lower.compareTo(upper) > 0) {
      throw new IllegalArgumentException(
          "lowerBound " + lower + " is greater than upperBound " + upper);
    }
    if (min != null && lower.compareTo(min) < 0) {
      throw new IllegalArgumentException(
          "lowerBound " + lower + " is below the domain's minimum " + min);
    }
    if (max != null && upper.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          "upperBound " + upper + " is above the domain's maximum " + max);
    }
    return Interval.of(lower, upper);
  }

  /**
   * The rows a cached entry's value holds: its result set with the change records appended since folded in, in
   * order. A value with many records is reported, so that the next write to the entry rewrites it whole.
   */
  private List<R> rowsOf(EntryIndex.Entry<K> entry, byte[] value) {
    ResultSetCodec.Decoded<R> decoded = resultSets.decode(value);
    if (decoded.changes().isEmpty()) {
      return decoded.rows();
    }
    if (changeRecords == null) {
      throw new IllegalStateException(
          "the cached value of "
              + entry.key()
              + " holds change records, and this"
              + " Dendrite was built without ChangeRecords to read them");
    }
    if (decoded.changes().size() >= RECORDS_BEFORE_REWRITE) {
      index.noteChangeRecords(entry.key(), decoded.changes().size());
    }
    List<R> rows = decoded.rows();
    for (byte[] record : decoded.changes()) {
      rows =
          normalize(entry.interval(), applyRecord(changeRecords, entry.interval(), rows, record));
    }
    return rows;
  }

  private static <K extends Comparable<? super K>, R, C> List<R> applyRecord(
      ChangeRecords<K, R, C> records, Interval<K> entryInterval, List<R> rows, byte[] record) {
    return records.apply(entryInterval, Collections.unmodifiableList(rows), records.decode(record));
  }

  /** The change record a write appends to the cached entries it touches, or null when it rewrites them. */
  private byte[] changeRecordOf(Object change) {
    return changeRecords != null && changeRecords.changeType().isInstance(change)
        ? ResultSetCodec.changeRecord(encodeChange(changeRecords, change))
        : null;
  }

  private static <C> byte[] encodeChange(ChangeRecords<?, ?, C> records, Object change) {
    return records.encode(records.changeType().cast(change));
  }

  /** How the write rewrites a cached entry: its own {@link CacheUpdate}, else its change record's fold. */
  private CacheUpdate<K, R> cacheUpdateOf(Object change, CacheUpdate<K, R> cacheUpdate) {
    if (cacheUpdate != null) {
      return cacheUpdate;
    }
    return recordUpdate(changeRecords, change);
  }

  private static <K extends Comparable<? super K>, R, C> CacheUpdate<K, R> recordUpdate(
      ChangeRecords<K, R, C> records, Object change) {
    C typed = records.changeType().cast(change);
    return (entryInterval, rows) -> records.apply(entryInterval, rows, typed);
  }

  /** Rows of {@code interval} only, each once, ordered by attribute. */
  private List<R> normalize(Interval<K> interval, Collection<R> found) {
    Map<Object, R> unique = new LinkedHashMap<>();
    for (R row : found) {
      K attribute = rows.attributeOf(row);
      if (attribute != null
          && attribute.compareTo(interval.lo()) >= 0
          && attribute.compareTo(interval.hi()) <= 0) {
        unique.putIfAbsent(rows.identityOf(row), row);
      }
    }
    List<R> result = new ArrayList<>(unique.values());
    result.sort(Comparator.comparing(rows::attributeOf));
    return result;
  }

  private IntervalLease<K> acquire(Interval<K> interval, LeaseMode mode) {
    try {
      return intervalLeases.acquire(interval, mode, intervalLeaseTimeout);
    } catch (TimeoutException e) {
      throw new DendriteBusyException(
          mode + " lease on " + interval + " not granted within " + intervalLeaseTimeout, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DendriteBusyException(
          "interrupted while waiting for a " + mode + " lease on " + interval, e);
    }
  }

  private interface DataStoreCall<T> {
    T call() throws Exception;
  }

  private interface DataStoreAction {
    void run() throws Exception;
  }

  private static <T> T call(DataStoreCall<T> work, String what) {
    try {
      return work.call();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new DataStoreException(what + " failed: " + e.getMessage(), e);
    }
  }

  private static void run(DataStoreAction work, String what) {
    call(
        () -> {
          work.run();
          return null;
        },
        what);
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
    private WriteBuffer<K> writeBuffer;
    private ChangeRecords<K, R, ?> changeRecords;
    private double beta = 1.0;
    private int alpha = 16;
    private Duration intervalLeaseLifetime = Duration.ofSeconds(10);
    private Duration intervalLeaseTimeout = Duration.ofSeconds(10);
    private boolean leasesEnabled = true;

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

    /** Who owns which range; defaults to a {@link LocalCoordinator}. */
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
     * RangeWriteBack}), which drains them to the data store later. The {@code change} given to a write is handed to
     * the buffer, which must accept its type, and the write's {@link ChangeApplier} is not used (it may be null).
     */
    public Builder<K, R> writeBack(WriteBuffer<K> buffer) {
      this.writeBuffer = Objects.requireNonNull(buffer, "buffer");
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
        throw new IllegalArgumentException("logBatch must be at least 1, got " + alpha);
      }
      this.alpha = alpha;
      return this;
    }

    /**
     * How long an interval lease lives (so a dead holder cannot block forever) and how long to wait for
     * one before giving up with {@link DendriteBusyException} (defaults 10 s each).
     */
    public Builder<K, R> intervalLeases(Duration lifetime, Duration timeout) {
      if (lifetime.isNegative() || lifetime.isZero() || timeout.isNegative()) {
        throw new IllegalArgumentException(
            "lease lifetime must be positive and timeout not negative");
      }
      this.intervalLeaseLifetime = lifetime;
      this.intervalLeaseTimeout = timeout;
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
      if (writeBuffer != null && policy != WritePolicy.WRITE_BACK) {
        throw new IllegalStateException(
            "writeBack(buffer) and writePolicy(" + policy + ") conflict: choose one");
      }
      if (collection == null || domain == null || cache == null) {
        throw new IllegalStateException("collection, domain and cache are required");
      }
      return new Dendrite<>(this);
    }
  }
}
