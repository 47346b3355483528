package io.dendrite.writeback.document;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.consistency.History;
import io.dendrite.consistency.StaleReadChecker;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DendriteMetrics;
import io.dendrite.iq.client.Backoff;
import io.dendrite.store.mongodb.MongoStore;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.store.DataStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Eight threads get random ranges of 1 to 20 rows and update, insert and delete single rows of one table through a
 * write-back Dendrite, while the engine's drain threads apply buffered writes in the background; an independent
 * checker then counts row-reads that returned a value (or an absence) the table could not have held while they ran.
 * With misses applying the overlapping buffered writes first there must be none, over MariaDB and over the
 * MongoDB-wire server, for β 1 and 0; with that turned off (the negative control) there must be some.
 */
@ExtendWith(RealServers.class)
class RangeWriteBackConsistencyIT {
  private static final int ROWS = 500;
  private static final int THREADS = 8;
  private static final Duration RUN =
      Duration.ofSeconds(Long.getLong("dendrite.consistency.seconds", 5));
  private static final Duration CONTROL_RUN = Duration.ofSeconds(6);

  /** Gets and writes each run makes at least, however slow a loaded machine is (up to {@link #LONGEST_RUN}). */
  private static final long MINIMUM_OPERATIONS = 300;

  private static final Duration LONGEST_RUN = Duration.ofSeconds(90);

  /**
   * Generous for the MongoDB-wire server: the set-up inserts all rows in one call, which FerretDB (SQLite) took over
   * 10 s for on a saturated machine in a soak; what this test checks is staleness, not speed.
   */
  private static final Duration MONGO_TIMEOUT = Duration.ofSeconds(30);

  /** Cache leases (any number of engines) and in-process locks (the engine owns its range) alike. */
  @ParameterizedTest(name = "beta {0}, single process {1}")
  @CsvSource({"1.0, false", "0.0, false", "1.0, true"})
  void overMariaDbNoRangeReadIsStale(double beta, boolean singleProcess, MySqlTestDatabase database)
      throws Exception {
    RangeWriteBackIT.createTable(database);
    try (MySqlStore store = MySqlStore.open(database.jdbcUrl(), 12, Duration.ofSeconds(10))) {
      assertNoStaleReads(run(store, RUN, beta, singleProcess, range -> range));
    }
  }

  /** Writes kept in the cached entries as change records (what the YCSB binding does), rewritten every 16. */
  @ParameterizedTest(name = "beta {0}")
  @CsvSource({"1.0", "0.0"})
  void overMariaDbWithChangeRecordsNoRangeReadIsStale(double beta, MySqlTestDatabase database)
      throws Exception {
    RangeWriteBackIT.createTable(database);
    try (MySqlStore store = MySqlStore.open(database.jdbcUrl(), 12, Duration.ofSeconds(10))) {
      assertNoStaleReads(
          run(
              store,
              RUN,
              beta,
              true,
              range -> range,
              settings -> settings.maxSharedFraction(beta).changeRecords(RangeRow.CHANGE_RECORDS)));
    }
  }

  @ParameterizedTest(name = "beta {0}, single process {1}")
  @CsvSource({"1.0, false", "0.0, false", "1.0, true"})
  void overTheMongoWireServerNoRangeReadIsStale(
      double beta, boolean singleProcess, MongoTestDatabase database) throws Exception {
    try (MongoStore store =
        MongoStore.open(database.connectionString(), database.name(), MONGO_TIMEOUT)) {
      assertNoStaleReads(run(store, RUN, beta, singleProcess, range -> range));
    }
  }

  @Test
  void overMariaDbWithoutApplyingOnAMissTheCheckerFindsStaleReads(MySqlTestDatabase database)
      throws Exception {
    RangeWriteBackIT.createTable(database);
    try (MySqlStore store = MySqlStore.open(database.jdbcUrl(), 12, Duration.ofSeconds(10))) {
      Outcome outcome =
          run(store, CONTROL_RUN, 1.0, true, RangeWriteBack.Builder::withoutApplyOnMissForTesting);
      assertThat(outcome.report.count()).as("stale reads without applying on a miss").isPositive();
    }
  }

  @Test
  void overTheMongoWireServerWithoutApplyingOnAMissTheCheckerFindsStaleReads(
      MongoTestDatabase database) throws Exception {
    try (MongoStore store =
        MongoStore.open(database.connectionString(), database.name(), MONGO_TIMEOUT)) {
      Outcome outcome =
          run(store, CONTROL_RUN, 1.0, true, RangeWriteBack.Builder::withoutApplyOnMissForTesting);
      assertThat(outcome.report.count()).as("stale reads without applying on a miss").isPositive();
    }
  }

  private static void assertNoStaleReads(Outcome outcome) {
    assertThat(outcome.report.count()).as("stale reads: %s", outcome.report.violations()).isZero();
    assertThat(outcome.report.rowReadsChecked()).isGreaterThan(2_000);
    assertThat(outcome.metrics.misses())
        .as("gets that applied buffered writes and queried")
        .isGreaterThan(100);
    assertThat(outcome.metrics.writes()).isGreaterThan(200);
    assertThat(outcome.readsOverBufferedInsertsOrDeletes)
        .as("reads whose range held a buffered insert or delete")
        .isGreaterThan(10);
    assertThat(outcome.drainedInBackground).as("the drain threads ran alongside").isPositive();
  }

  private record Outcome(
      StaleReadChecker.Report report,
      DendriteMetrics metrics,
      long readsOverBufferedInsertsOrDeletes,
      long drainedInBackground) {}

  /** The workload's shared state: the history, and what each row holds after its last acknowledged write. */
  private static final class Workload {
    final History history;
    final Map<Long, Long> rows = new ConcurrentHashMap<>();

    /** Rows whose last write was an insert or a delete. */
    final Map<Long, Boolean> lastWriteInsertedOrDeleted = new ConcurrentHashMap<>();

    final Object[] rowLocks = IntStream.range(0, ROWS).mapToObj(n -> new Object()).toArray();
    final AtomicLong versions = new AtomicLong();
    final LongAdder readsOverBufferedInsertsOrDeletes = new LongAdder();
    final LongAdder gets = new LongAdder();
    final LongAdder writes = new LongAdder();

    boolean didTooLittle() {
      return gets.sum() < MINIMUM_OPERATIONS || writes.sum() < MINIMUM_OPERATIONS;
    }

    Workload() {
      Map<Long, Object> initial = new HashMap<>();
      for (long id = 0; id < ROWS; id += 2) {
        rows.put(id, 0L);
        initial.put(id, 0L);
      }
      history = new History(initial);
    }
  }

  private static Outcome run(
      DataStore store,
      Duration duration,
      double beta,
      boolean singleProcess,
      UnaryOperator<RangeWriteBack.Builder<Long>> range)
      throws Exception {
    return run(
        store, duration, beta, singleProcess, range, settings -> settings.maxSharedFraction(beta));
  }

  private static Outcome run(
      DataStore store,
      Duration duration,
      double beta,
      boolean singleProcess,
      UnaryOperator<RangeWriteBack.Builder<Long>> range,
      UnaryOperator<Dendrite.Builder<Long, RangeRow>> dendrite)
      throws Exception {
    store.apply(
        IntStream.range(0, ROWS)
            .filter(id -> id % 2 == 0)
            .mapToObj(id -> new RangeRow(id, 0).insert())
            .toList());
    Workload workload = new Workload();
    // Eight threads contend for the same entries' Q leases; on two shared, busy cores a holder can
    // keep one past the client's default 2 s wait, and a refused write is not what this test
    // checks.
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder()
                .count(2)
                .client(
                    client ->
                        client.backoff(
                            new Backoff(
                                Duration.ofMillis(1),
                                Duration.ofMillis(50),
                                Duration.ofSeconds(20),
                                0.5)))
                .start();
        RangeStack stack =
            new RangeStack(
                cache.client,
                store,
                engine ->
                    engine
                        .replicas(2)
                        .partitions(8)
                        .singleProcess(singleProcess)
                        .drainThreads(2)
                        .idlePause(Duration.ofMillis(20)),
                range,
                dendrite)) {
      ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
      long start = System.nanoTime();
      long deadline = start + duration.toNanos();
      long lastDeadline = start + LONGEST_RUN.toNanos();
      List<Thread> workers =
          IntStream.range(0, THREADS)
              .mapToObj(
                  n ->
                      new Thread(
                          () -> {
                            try {
                              // A loaded machine makes the run longer, not the assertions on how
                              // much it did flaky.
                              while (System.nanoTime() < deadline
                                  || (workload.didTooLittle()
                                      && System.nanoTime() < lastDeadline)) {
                                step(stack, workload);
                              }
                            } catch (Throwable failure) {
                              failures.add(failure);
                            }
                          },
                          "range-consistency-" + n))
              .toList();
      workers.forEach(Thread::start);
      for (Thread worker : workers) {
        worker.join();
      }
      assertThat(failures).as("operations that failed").isEmpty();

      Outcome outcome =
          new Outcome(
              StaleReadChecker.check(workload.history),
              stack.dendrite.metrics(),
              workload.readsOverBufferedInsertsOrDeletes.sum(),
              stack.writeBack.metrics().drained());
      System.out.printf(
          "range write-back consistency (%s, beta %s): %d row-reads checked, %d stale, %d reads over "
              + "buffered inserts/deletes, %d drained in background; %s%n",
          store.getClass().getSimpleName(),
          beta,
          outcome.report.rowReadsChecked(),
          outcome.report.count(),
          outcome.readsOverBufferedInsertsOrDeletes,
          outcome.drainedInBackground,
          outcome.metrics);

      stack.writeBack.drainNow();
      assertThat(RangeRow.readRange(store, 0, ROWS - 1))
          .as("the table after every write drained")
          .isEqualTo(
              new TreeMap<>(workload.rows)
                  .entrySet().stream()
                      .map(row -> new RangeRow(row.getKey(), row.getValue()))
                      .toList());
      RangeWriteBackIT.awaitNoEntries(stack.buffer);
      return outcome;
    }
  }

  /** One random operation: half range gets, half single-row writes, all recorded. */
  private static void step(RangeStack stack, Workload workload) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    if (random.nextBoolean()) {
      long lowerBound = random.nextInt(ROWS);
      long upperBound = Math.min(ROWS - 1, lowerBound + random.nextInt(20));
      if (holdsBufferedInsertOrDelete(stack, workload, lowerBound, upperBound)) {
        workload.readsOverBufferedInsertsOrDeletes.increment();
      }
      long start = System.nanoTime();
      List<RangeRow> rows = stack.get(lowerBound, upperBound);
      long end = System.nanoTime();
      Map<Long, Object> returned = new HashMap<>();
      rows.forEach(row -> returned.put(row.id(), row.val()));
      workload.history.recordRead(lowerBound, upperBound, returned, start, end);
      workload.gets.increment();
      return;
    }
    long id = random.nextInt(ROWS);
    // One writer per row at a time, so that whether the row exists is known: an update needs it, an
    // insert not.
    workload.writes.increment();
    synchronized (workload.rowLocks[(int) id]) {
      long start = System.nanoTime();
      if (!workload.rows.containsKey(id)) {
        RangeRow row = new RangeRow(id, workload.versions.incrementAndGet());
        stack.insert(row);
        workload.history.recordWrite(id, row.val(), start, System.nanoTime());
        workload.rows.put(id, row.val());
        workload.lastWriteInsertedOrDeleted.put(id, true);
      } else if (random.nextInt(3) == 0) {
        stack.delete(id);
        workload.history.recordWrite(id, null, start, System.nanoTime());
        workload.rows.remove(id);
        workload.lastWriteInsertedOrDeleted.put(id, true);
      } else {
        RangeRow row = new RangeRow(id, workload.versions.incrementAndGet());
        stack.update(row);
        workload.history.recordWrite(id, row.val(), start, System.nanoTime());
        workload.rows.put(id, row.val());
        workload.lastWriteInsertedOrDeleted.put(id, false);
      }
    }
  }

  /** Whether, right before a read, a row of its range has an insert or delete still buffered. */
  private static boolean holdsBufferedInsertOrDelete(
      RangeStack stack, Workload workload, long lowerBound, long upperBound) {
    for (long id = lowerBound; id <= upperBound; id++) {
      if (workload.lastWriteInsertedOrDeleted.getOrDefault(id, false)
          && !stack.writeBack.engine().bufferedAmong(List.of(RangeRow.key(id))).isEmpty()) {
        return true;
      }
    }
    return false;
  }
}
