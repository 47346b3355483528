package io.dendrite.core;

import io.dendrite.core.interval.IntervalTree;
import io.dendrite.core.interval.PredicateIndex;
import io.dendrite.core.log.LogRecord;
import io.dendrite.core.log.PredicateLog;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.StampedLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * What one range has cached, in process: PrInT (cached result sets by interval), the intervals that
 * are completely cached as points (coverage), each entry's row count (for β) and number of appended
 * change records (when to rewrite it whole), and the log that lets a successor rebuild all of it.
 *
 * <p>Two rules keep the index and the cache in step under concurrency. An entry is registered only
 * after its value was stored, and only while its filler holds a Shared LeMInT lease, so no write runs
 * between the store and the registration. An entry is dropped by unregistering it first and deleting
 * its value second, so whatever a concurrent filler does in between, a value present in the cache is
 * always a registered one, and writes find it.
 *
 * <p>A third rule keeps coverage honest: while an interval is covered, every row inside it has a registered point
 * entry. Whatever unregisters a point entry uncovers what overlaps it first or in the same step, and every change
 * of coverage or removal of an entry holds {@link #coverageLock} for writing; a get planned from coverage reads the
 * coverage and the entries under it as one snapshot (soak finding 9: read apart, a write could uncover the interval
 * and drop a point between the two reads, and the get served the point's rows as absent).
 */
final class EntryIndex<K extends Comparable<? super K>> {
  private static final String COVERED = "";

  private final DomainType<K> type;
  private final CacheKeys<K> keys;
  private final PredicateLog log;
  private final PredicateIndex<K, String> entries = new PredicateIndex<>();
  private final PredicateIndex<K, String> coverage = new PredicateIndex<>();

  /**
   * Written by every change that can make a covered interval lose a point ({@link #remove}, {@link #cover},
   * {@link #uncoverOverlapping}); read by {@link #plan} to see coverage and entries as one snapshot.
   */
  private final StampedLock coverageLock = new StampedLock();

  /** Test-only: runs between a plan's look at the coverage and its look at the entries. */
  private volatile Runnable afterCoverageLook = () -> {};

  /**
   * Entries a write-around has unregistered and not yet deleted, with how many writes hold each: while its Q-inv
   * lease holds, the old value stays readable to whoever reads the cache without PrInT (another process's direct hit,
   * {@link CachedReads}), so every write that overlaps such an entry must quarantine and delete it too before it
   * returns, not only the write that unregistered it. Guarded by itself.
   */
  private final Map<Entry<K>, Integer> invalidating = new HashMap<>();

  /** Told the key of every entry {@link #remove}d, once it is unregistered (the near cache drops its copy). */
  private volatile Consumer<String> whenRemoved = key -> {};

  private final Map<String, Integer> rowCounts = new ConcurrentHashMap<>();
  private final Map<String, Integer> changeRecords = new ConcurrentHashMap<>();

  /**
   * Registered entries whose value this process deleted from the cache servers on purpose: the range's sole owner
   * keeps them current in its near cache only ({@link #detach}). Until a fill registers one again, the servers hold
   * no value for it, so a write need not send them anything.
   */
  private final Set<String> detached = ConcurrentHashMap.newKeySet();

  EntryIndex(DomainType<K> type, CacheKeys<K> keys, PredicateLog log) {
    this.type = type;
    this.keys = keys;
    this.log = log;
  }

  /** A cached entry: the result set of {@code interval} lives under {@code key}. */
  record Entry<K extends Comparable<? super K>>(Interval<K> interval, String key) {}

  /**
   * The entries a get of {@code interval} can be answered from, without a round trip: the entry of
   * exactly this interval, else the smallest entry containing it, else — when the interval is covered
   * by points — every entry overlapping it (possibly none: a covered interval with no rows). Empty if
   * the cache cannot answer.
   */
  Optional<List<Entry<K>>> plan(Interval<K> interval) {
    List<IntervalTree.Entry<K, String>> containing = entries.containing(interval);
    for (IntervalTree.Entry<K, String> entry : containing) {
      if (entry.interval().equals(interval)) {
        return Optional.of(List.of(new Entry<>(entry.interval(), entry.value())));
      }
    }
    Optional<List<Entry<K>>> covered = coveredPlan(interval);
    if (covered.isPresent()) {
      return covered;
    }
    return containing.stream()
        .min(
            Comparator.comparingInt(
                entry -> rowCounts.getOrDefault(entry.value(), Integer.MAX_VALUE)))
        .map(entry -> List.of(new Entry<>(entry.interval(), entry.value())));
  }

  /**
   * Every entry overlapping {@code interval} if it is covered, read as one snapshot with the coverage: optimistically
   * (no lock on the hit path), again under the read lock if an entry or coverage was removed meanwhile.
   */
  private Optional<List<Entry<K>>> coveredPlan(Interval<K> interval) {
    long stamp = coverageLock.tryOptimisticRead();
    Optional<List<Entry<K>>> plan = coveredEntries(interval);
    if (coverageLock.validate(stamp)) {
      return plan;
    }
    stamp = coverageLock.readLock();
    try {
      return coveredEntries(interval);
    } finally {
      coverageLock.unlockRead(stamp);
    }
  }

  private Optional<List<Entry<K>>> coveredEntries(Interval<K> interval) {
    if (coverage.containing(interval).isEmpty()) {
      return Optional.empty();
    }
    afterCoverageLook.run();
    return Optional.of(impactedBy(interval));
  }

  /** Test-only: {@code hook} runs in every plan from coverage between its look at the coverage and at the entries. */
  void afterCoverageLookForTesting(Runnable hook) {
    this.afterCoverageLook = hook;
  }

  /** Every registered entry whose interval overlaps {@code interval}. */
  List<Entry<K>> impactedBy(Interval<K> interval) {
    return entries.impactedBy(interval).stream()
        .map(e -> new Entry<>(e.interval(), e.value()))
        .toList();
  }

  /**
   * The entries a write-around of {@code interval} must quarantine and delete: the registered ones overlapping it and
   * those other write-arounds are still invalidating; each is marked as being invalidated until {@link
   * #endInvalidating}. The caller unregisters them.
   */
  List<Entry<K>> startInvalidating(Interval<K> interval) {
    synchronized (invalidating) {
      List<Entry<K>> found = new ArrayList<>(impactedBy(interval));
      for (Entry<K> entry : invalidating.keySet()) {
        if (entry.interval().overlaps(interval) && !found.contains(entry)) {
          found.add(entry);
        }
      }
      found.forEach(entry -> invalidating.merge(entry, 1, Integer::sum));
      return found;
    }
  }

  /** {@link #startInvalidating}'s entries are deleted (or owed): one write fewer holds each. */
  void endInvalidating(List<Entry<K>> entries) {
    synchronized (invalidating) {
      entries.forEach(
          entry ->
              invalidating.computeIfPresent(
                  entry, (key, writes) -> writes == 1 ? null : writes - 1));
    }
  }

  /** Every registered entry. */
  List<Entry<K>> all() {
    return entries.all().stream().map(e -> new Entry<>(e.interval(), e.value())).toList();
  }

  boolean isRegistered(Interval<K> interval, String key) {
    return entries.containing(interval).stream()
        .anyMatch(entry -> entry.interval().equals(interval) && entry.value().equals(key));
  }

  boolean isCovered(Interval<K> interval) {
    return !coverage.containing(interval).isEmpty();
  }

  /** The number of rows of a registered entry, if known (entries rebuilt from the log have none). */
  OptionalInt rowCount(String key) {
    Integer count = rowCounts.get(key);
    return count == null ? OptionalInt.empty() : OptionalInt.of(count);
  }

  String keyOf(Interval<K> interval) {
    return keys.entryKey(interval);
  }

  /**
   * Logs the entry, runs {@code store} and registers the entry if it stored the value, through
   * {@code registerIf}: it runs the registration only while the filler still excludes writers (its interval
   * lease) and says whether it did. A writer that got in meanwhile found no entry to invalidate.
   *
   * <p>A fill that fails logs no delete: another fill of the same result may have logged its insert after this
   * one's and registered the entry, and a delete logged now would cancel that insert, so a successor would neither
   * drop nor refresh a cached value (a lost I lease made exactly that happen under ZooKeeper restarts). The insert
   * left in force costs a successor one miss: it finds no value, drops the entry and fills it.
   *
   * @return whether the entry is now cached and registered (when false, a stored value may remain unregistered:
   *     the caller deletes it)
   */
  boolean add(
      Interval<K> interval,
      String key,
      int rows,
      BooleanSupplier store,
      Predicate<Runnable> registerIf) {
    return announce(interval, key)
        && store.getAsBoolean()
        && registerIf.test(() -> register(interval, key, rows));
  }

  /**
   * Logs that {@code key} is about to hold the result set of {@code interval}: the log record comes
   * before the value, so a successor never misses a cached entry.
   *
   * @return false if the record could not be stored: then the value must not be stored either
   */
  boolean announce(Interval<K> interval, String key) {
    return log.appendNow(record(LogRecord.Action.INSERT, interval, key), key);
  }

  /** Registers an announced entry whose value is now stored. */
  void register(Interval<K> interval, String key, int rows) {
    entries.register(interval, key);
    rowCounts.put(key, rows);
    changeRecords.remove(key);
    detached.remove(key);
  }

  /**
   * Notes that a write of the range's sole owner deleted {@code key}'s value from the cache servers under its Q lease
   * and keeps the result in the near cache only. Call under the write's Exclusive interval lease, once the delete is
   * committed: a fill, which stores and registers under a Shared lease, cannot run meanwhile.
   */
  void detach(String key) {
    detached.add(key);
  }

  /** Whether the cache servers hold no value for {@code key} since {@link #detach}, and no fill stored one since. */
  boolean isDetached(String key) {
    return detached.contains(key);
  }

  /** Records a new row count for a registered entry after a write-through refresh rewrote it whole. */
  void updateRowCount(String key, int rows) {
    rowCounts.computeIfPresent(key, (k, old) -> rows);
    changeRecords.remove(key);
  }

  /**
   * The change records appended to an entry's value since it was last written whole, as far as this process knows
   * (0 for entries rebuilt from the log: a reader that finds many reports them with {@link #noteChangeRecords}).
   */
  int changeRecords(String key) {
    return changeRecords.getOrDefault(key, 0);
  }

  /** Counts one more change record appended to an entry's value. */
  void addChangeRecord(String key) {
    changeRecords.merge(key, 1, Integer::sum);
  }

  /** A reader found {@code records} change records in an entry's value. */
  void noteChangeRecords(String key, int records) {
    changeRecords.merge(key, records, Math::max);
  }

  /**
   * Unregisters an entry; the caller deletes its value afterwards (never before). Covered intervals
   * overlapping it are uncovered too: "covered" promises that every row inside is in a registered
   * entry, and a concurrent get may be dropping an entry a filler has just registered and covered.
   */
  void remove(Entry<K> entry) {
    // Under the coverage lock: a filler covering an interval checks its points are still
    // registered, so an entry is either gone before that check or uncovered after the cover, and no
    // plan sees the entry gone while the coverage stays (soak finding 9).
    long stamp = coverageLock.writeLock();
    try {
      uncoverOverlappingLocked(entry.interval());
      if (entries.unregister(entry.interval(), entry.key())) {
        rowCounts.remove(entry.key());
        changeRecords.remove(entry.key());
        detached.remove(entry.key());
        log.appendLater(record(LogRecord.Action.DELETE, entry.interval(), null), entry.key());
      }
    } finally {
      coverageLock.unlockWrite(stamp);
    }
    whenRemoved.accept(entry.key());
  }

  /** Has {@code listener} told the key of every entry removed from now on. */
  void whenRemoved(Consumer<String> listener) {
    this.whenRemoved = listener;
  }

  /**
   * Marks {@code interval} as completely cached as points, through {@code registerIf} as in {@link #add}: a
   * coverage registered after a writer changed the interval would read the writer's new row as absent. Covers
   * only if every one of {@code points} (the entries the filler found or stored for the interval's rows) is
   * still registered: a get that found one's value gone dropped it without any lease, and a coverage without it
   * would read its rows as absent.
   */
  void cover(Interval<K> interval, List<Entry<K>> points, Predicate<Runnable> registerIf) {
    String colocation = keys.entryKey(interval);
    if (!log.appendNow(record(LogRecord.Action.COVER, interval, null), colocation)) {
      return;
    }
    boolean[] covered = {false};
    registerIf.test(
        () -> {
          long stamp = coverageLock.writeLock();
          try {
            if (points.stream().allMatch(point -> isRegistered(point.interval(), point.key()))) {
              coverage.register(interval, COVERED);
              covered[0] = true;
            }
          } finally {
            coverageLock.unlockWrite(stamp);
          }
        });
    if (!covered[0]) {
      log.appendLater(record(LogRecord.Action.UNCOVER, interval, null), colocation);
    }
  }

  /** Forgets the completeness of every covered interval overlapping {@code interval}. */
  void uncoverOverlapping(Interval<K> interval) {
    long stamp = coverageLock.writeLock();
    try {
      uncoverOverlappingLocked(interval);
    } finally {
      coverageLock.unlockWrite(stamp);
    }
  }

  /** Forgets the completeness of every covered interval. */
  void uncoverAll() {
    long stamp = coverageLock.writeLock();
    try {
      for (IntervalTree.Entry<K, String> covered : coverage.all()) {
        uncoverOverlappingLocked(covered.interval());
      }
    } finally {
      coverageLock.unlockWrite(stamp);
    }
  }

  private void uncoverOverlappingLocked(Interval<K> interval) {
    for (IntervalTree.Entry<K, String> covered : coverage.impactedBy(interval)) {
      if (coverage.unregister(covered.interval(), COVERED)) {
        log.appendLater(
            record(LogRecord.Action.UNCOVER, covered.interval(), null),
            keys.entryKey(covered.interval()));
      }
    }
  }

  /**
   * Rebuilds the index from the log (records sorted by LSN, cancelling pairs dropped), then rewrites
   * the log compacted. Call before the index serves anything.
   */
  void rebuild() {
    detached.clear();
    Map<LogRecord, String> live = new HashMap<>();
    for (LogRecord record : log.readCompacted()) {
      Interval<K> interval =
          Interval.of(type.parse(record.lowerBound()), type.parse(record.upperBound()));
      if (record.action() == LogRecord.Action.INSERT) {
        String key = record.key().orElseThrow();
        entries.register(interval, key);
        live.put(record, key);
      } else {
        coverage.register(interval, COVERED);
        live.put(record, keys.entryKey(interval));
      }
    }
    log.rewrite(live);
  }

  /** Appends buffered log records. */
  void flushLog() {
    log.flush();
  }

  /**
   * Rewrites the log compacted once it holds many more records than are in force ({@link
   * PredicateLog#compactWhenDue}): called after gets and writes, outside every lock of the index.
   */
  void compactLogWhenDue() {
    log.compactWhenDue(
        record ->
            record.action() == LogRecord.Action.INSERT
                ? record.key().orElseThrow()
                : keys.entryKey(
                    Interval.of(type.parse(record.lowerBound()), type.parse(record.upperBound()))));
  }

  /** Test-only: see {@link PredicateLog#compactOnlyAtRebuildForTesting}. */
  void compactLogOnlyAtRebuildForTesting() {
    log.compactOnlyAtRebuildForTesting();
  }

  int size() {
    return entries.size();
  }

  private LogRecord record(LogRecord.Action action, Interval<K> interval, String key) {
    return new LogRecord(
        action,
        log.nextLsn(),
        type.format(interval.lo()),
        type.format(interval.hi()),
        Optional.ofNullable(key));
  }
}
