package io.dendrite.core;

import io.dendrite.core.interval.IntervalLease;
import io.dendrite.core.interval.LeaseMode;
import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * A {@link Dendrite}'s gets: the lookup of an interval in PrInT and the cache, and the fill of a miss (the entry's
 * I lease, a Shared lease on the interval, the overlapping buffered writes applied first under write-back, the
 * query, the store and its registration), placing result sets as β ({@link Dendrite.Builder#maxSharedFraction})
 * says.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
final class ReadPath<K extends Comparable<? super K>, R> {
  private final CacheParts<K, R> common;
  private final IqClient cache;
  private final EntryIndex<K> index;
  private final CacheOutage outage;
  private final DendriteCounters metrics;
  private final RowCodec<K, R> rows;
  private final ResultSetCodec<R> resultSets;
  private final boolean leasesEnabled;
  private final double beta;
  private final TypedWriteBuffer<K, ?> writeBuffer;

  /** The near cache (L1), or null when this process may not keep results in memory. */
  private final LocalResults<R> local;

  /** Whether this process can still show it owns the range: L1 is used only while it can. */
  private final BooleanSupplier owned;

  /**
   * {@code writeBuffer}: null unless the Dendrite writes back. {@code local}: the near cache, or null; {@code owned}
   * says whether it may be used now.
   */
  ReadPath(
      CacheParts<K, R> common,
      double beta,
      TypedWriteBuffer<K, ?> writeBuffer,
      LocalResults<R> local,
      BooleanSupplier owned) {
    this.local = local;
    this.owned = owned;
    this.common = common;
    this.cache = common.cache;
    this.index = common.index;
    this.outage = common.outage;
    this.metrics = common.metrics;
    this.rows = common.rows;
    this.resultSets = common.resultSets;
    this.leasesEnabled = common.leasesEnabled;
    this.beta = beta;
    this.writeBuffer = writeBuffer;
  }

  Optional<List<R>> lookup(Interval<K> interval, RoundTrips trips) {
    Optional<List<EntryIndex.Entry<K>>> plan = index.plan(interval);
    if (plan.isEmpty()) {
      return Optional.empty();
    }
    List<EntryIndex.Entry<K>> entries = plan.get();
    if (entries.isEmpty()) {
      return Optional.of(List.of());
    }
    if (local != null) {
      List<R> kept = fromLocal(interval, entries);
      if (kept != null) {
        local.hit();
        return Optional.of(kept);
      }
    }
    List<String> keys = entries.stream().map(EntryIndex.Entry::key).toList();
    long[] stamps = local == null ? null : stamps(keys);
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
          common.drop(entry, trips);
        }
      }
      return Optional.empty();
    }
    List<R> found = new ArrayList<>();
    for (int i = 0; i < entries.size(); i++) {
      EntryIndex.Entry<K> entry = entries.get(i);
      byte[] data = values.get(entry.key()).data();
      List<R> entryRows = common.rowsOf(entry, data);
      found.addAll(entryRows);
      if (local != null) {
        local.install(
            entry.key(), stamps[i], common.normalize(entry.interval(), entryRows), data.length);
      }
    }
    return Optional.of(common.normalize(interval, found));
  }

  /**
   * The get's rows from L1 alone, or null when L1 lacks one of the plan's entries or this process can no longer show
   * it owns the range (then L1 is emptied: another owner may write what it holds).
   */
  private List<R> fromLocal(Interval<K> interval, List<EntryIndex.Entry<K>> entries) {
    if (entries.size() == 1) {
      EntryIndex.Entry<K> entry = entries.get(0);
      List<R> rows = local.get(entry.key());
      if (rows == null || !stillOwned()) {
        return null;
      }
      // Kept normalized to the entry's interval: a get of exactly that interval takes the list as
      // it is.
      return entry.interval().equals(interval) ? rows : common.normalize(interval, rows);
    }
    List<R> found = new ArrayList<>();
    for (EntryIndex.Entry<K> entry : entries) {
      List<R> rows = local.get(entry.key());
      if (rows == null) {
        return null;
      }
      found.addAll(rows);
    }
    return stillOwned() ? common.normalize(interval, found) : null;
  }

  private boolean stillOwned() {
    if (owned.getAsBoolean()) {
      return true;
    }
    local.dropAll();
    return false;
  }

  private long[] stamps(List<String> keys) {
    long[] stamps = new long[keys.size()];
    for (int i = 0; i < stamps.length; i++) {
      stamps[i] = local.stamp(keys.get(i));
    }
    return stamps;
  }

  List<R> fill(Interval<K> interval, RangeQuery<K, R> query, RoundTrips trips) {
    String key = index.keyOf(interval);
    long stamp = local == null ? LocalResults.WRITING : local.stamp(key);
    boolean cacheReachable = outage.settle(List.of(key), trips);
    LeaseHandle inhibit = null;
    if (cacheReachable && leasesEnabled) {
      try {
        trips.add(1);
        ReadResult read = cache.read(key);
        if (read instanceof ReadResult.Hit && !index.isRegistered(interval, key)) {
          // A value nobody registered is kept current by nobody, yet a process that reads cached
          // results directly trusts it (CachedReads): remove it, then lease the key as usual. (A
          // filler between its store and its registration loses its value: one miss more.)
          trips.add(2);
          cache.delete(key);
          read = cache.read(key);
        }
        if (read instanceof ReadResult.Leased leased) {
          inhibit = leased.lease();
        } else if (read instanceof ReadResult.Hit hit && index.isRegistered(interval, key)) {
          List<R> found =
              common.normalize(
                  interval,
                  common.rowsOf(new EntryIndex.Entry<>(interval, key), hit.value().data()));
          if (local != null) {
            local.install(key, stamp, found, hit.value().data().length);
          }
          return found;
        }
      } catch (IqException unreachable) {
        cacheReachable = false;
      }
    }
    IntervalLease<K> shared = leasesEnabled ? common.acquire(interval, LeaseMode.SHARED) : null;
    try {
      if (writeBuffer != null) {
        // Under the Shared lease no overlapping write can be buffered until the query returns.
        writeBuffer.applyOverlapping(interval);
      }
      List<R> result =
          common.normalize(
              interval, CacheParts.call(() -> query.query(interval.lo(), interval.hi()), "query"));
      if (!cacheReachable) {
        metrics.cacheUnavailable.increment();
      } else if (shared == null || !shared.isExpired()) {
        // An expired Shared lease may have let a write through: then the result must not be cached.
        int stored = store(interval, key, result, inhibit, shared, trips);
        if (stored >= 0 && local != null) {
          // Still under the Shared lease: no write of the interval can begin before this.
          local.install(key, stamp, result, stored);
        }
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

  /**
   * Caches a miss's result as β says.
   *
   * @return the encoded size of the value stored and registered under {@code key}, or -1 when none was (β = 0
   *     stores points instead; another filler held the key's I lease; the lease lapsed; a server was unreachable)
   */
  private int store(
      Interval<K> interval,
      String key,
      List<R> result,
      LeaseHandle inhibit,
      IntervalLease<K> shared,
      RoundTrips trips) {
    try {
      if (beta == 0) {
        storePoints(interval, result, shared, trips);
        return -1;
      }
      if (beta < 1) {
        dropOverDuplicated(interval, result, trips);
      }
      if (leasesEnabled && inhibit == null) {
        return -1;
      }
      byte[] value = resultSets.encode(result);
      trips.add(2);
      boolean registered =
          addWhileHeld(
              interval,
              key,
              result.size(),
              () -> (leasesEnabled ? inhibit.fill(value) : cache.set(key, value)) == Outcome.OK,
              shared,
              trips);
      return registered ? value.length : -1;
    } catch (IqException unreachable) {
      // The store may have reached the server before the connection failed: a value this owner
      // never registered would be kept current by nobody. Deleted once the server answers again.
      outage.owe(key);
      metrics.cacheUnavailable.increment();
      return -1;
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
        common.drop(entry, trips);
      }
    }
  }
}
