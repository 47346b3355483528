package io.dendrite.core;

import io.dendrite.core.interval.IntervalLease;
import io.dendrite.core.interval.IntervalLeases;
import io.dendrite.core.interval.LeaseMode;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * What the read path and the write paths of one {@link Dendrite} share: the cache servers, PrInT ({@link
 * EntryIndex}), the deletes owed to unreachable servers, the codecs, the counters and the interval leases
 * (LeMInT); and the steps they all take: dropping an entry, reading the rows a cached value holds, keeping rows to
 * an interval, running the caller's data-store functions.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
final class CacheParts<K extends Comparable<? super K>, R> {
  /** After how many appended change records a write rewrites a cached entry whole (see {@link ChangeRecords}). */
  static final int RECORDS_BEFORE_REWRITE = 16;

  final IqClient cache;
  final EntryIndex<K> index;
  final CacheOutage outage;
  final DendriteCounters metrics;
  final RowCodec<K, R> rows;
  final ResultSetCodec<R> resultSets;
  final ChangeRecords<K, R, ?> changeRecords;
  private final CachedRows<K, R> cachedRows;

  /** False only for the unleased negative control (tests). */
  final boolean leasesEnabled;

  private final IntervalLeases<K> intervalLeases;
  private final Duration intervalLeaseTimeout;

  CacheParts(
      IqClient cache,
      EntryIndex<K> index,
      DendriteCounters metrics,
      RowCodec<K, R> rows,
      ChangeRecords<K, R, ?> changeRecords,
      boolean leasesEnabled,
      Duration intervalLeaseLifetime,
      Duration intervalLeaseTimeout) {
    this.cache = cache;
    this.index = index;
    this.outage = new CacheOutage(cache);
    this.metrics = metrics;
    this.rows = rows;
    this.resultSets = new ResultSetCodec<>(rows);
    this.changeRecords = changeRecords;
    this.cachedRows = new CachedRows<>(rows, changeRecords);
    this.leasesEnabled = leasesEnabled;
    this.intervalLeases = new IntervalLeases<>(intervalLeaseLifetime);
    this.intervalLeaseTimeout = intervalLeaseTimeout;
  }

  /** Unregisters first, deletes second: see {@link EntryIndex}. */
  void drop(EntryIndex.Entry<K> entry, RoundTrips trips) {
    index.remove(entry);
    try {
      trips.add(1);
      cache.delete(entry.key());
    } catch (IqException unreachable) {
      outage.owe(entry.key());
    }
  }

  /** The lease request's result, or null after dropping the entry when its server cannot be reached. */
  <T> T unlessUnreachable(EntryIndex.Entry<K> entry, Supplier<T> request) {
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
  static <T> T await(CompletableFuture<T> reply) {
    try {
      return reply.join();
    } catch (CompletionException failed) {
      throw failed.getCause() instanceof IqException iq ? iq : failed;
    }
  }

  /**
   * A transaction whose end did not apply everywhere (a tid record expired, a server restarted or went
   * away) may have left old values behind: drop every entry it touched.
   */
  void settleEnd(Outcome end, Collection<EntryIndex.Entry<K>> touched) {
    if (end == Outcome.OK) {
      return;
    }
    for (EntryIndex.Entry<K> entry : touched) {
      drop(entry, new RoundTrips());
    }
  }

  /**
   * The rows a cached entry's value holds: its result set with the change records appended since folded in, in
   * order. A value with many records is reported, so that the next write to the entry rewrites it whole.
   */
  List<R> rowsOf(EntryIndex.Entry<K> entry, byte[] value) {
    return cachedRows.rowsOf(
        entry.interval(),
        entry.key(),
        value,
        records -> index.noteChangeRecords(entry.key(), records));
  }

  /**
   * {@code change}'s byte form as {@link ChangeRecords#encode} gives it, or null when it is not of the change-records
   * type (the write rewrites the entries it touches then). {@link ResultSetCodec#changeRecord} makes the record a
   * write appends of it.
   */
  byte[] encodedChangeOf(Object change) {
    return changeRecords != null && changeRecords.changeType().isInstance(change)
        ? encodeChange(changeRecords, change)
        : null;
  }

  private static <C> byte[] encodeChange(ChangeRecords<?, ?, C> records, Object change) {
    return records.encode(records.changeType().cast(change));
  }

  /** How the write rewrites a cached entry: its own {@link CacheUpdate}, else its change record's fold. */
  CacheUpdate<K, R> cacheUpdateOf(Object change, CacheUpdate<K, R> cacheUpdate) {
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

  /**
   * A write's change, {@code encoded} as it appended it ({@link #encodedChangeOf}), as a change record folds into a
   * result's rows: decoded once, exactly as a reader of the appended record reads it, then applied to each result the
   * near cache keeps.
   */
  CachedRows.Fold<K, R> changeFold(byte[] encoded) {
    return cachedRows.folding(encoded);
  }

  /** Rows of {@code interval} only, each once, ordered by attribute. */
  List<R> normalize(Interval<K> interval, Collection<R> found) {
    return cachedRows.normalize(interval, found);
  }

  IntervalLease<K> acquire(Interval<K> interval, LeaseMode mode) {
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

  /**
   * Repairs what a write whose Exclusive lease lapsed before its data-store write ended may have let through (issue
   * 37, case 2): once the lease lapsed, a get of an overlapping interval could take a Shared lease, read the rows the
   * write had not changed yet, and cache them under a key the write never saw. So, after the write: wait until every
   * Shared lease granted by now has ended (a filler that read before the write ended registers before its lease
   * ends, or not at all), then uncover and drop every cached entry overlapping the write's interval, including the
   * ones the write itself refreshed, which is cheaper than telling them apart on a path this rare. Fillers granted
   * later read after the write. Call it only after the data-store write (or the hand-over to the write buffer).
   */
  void dropWhatALapsedWriteMissed(Interval<K> interval, RoundTrips trips) {
    intervalLeases.awaitSharedLeasesGrantedNow(interval);
    index.uncoverOverlapping(interval);
    for (EntryIndex.Entry<K> entry : index.impactedBy(interval)) {
      drop(entry, trips);
    }
    metrics.writesOutlivingLease.increment();
  }

  interface DataStoreCall<T> {
    T call() throws Exception;
  }

  interface DataStoreAction {
    void run() throws Exception;
  }

  static <T> T call(DataStoreCall<T> work, String what) {
    try {
      return work.call();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new DataStoreException(what + " failed: " + e.getMessage(), e);
    }
  }

  static void run(DataStoreAction work, String what) {
    call(
        () -> {
          work.run();
          return null;
        },
        what);
  }
}
