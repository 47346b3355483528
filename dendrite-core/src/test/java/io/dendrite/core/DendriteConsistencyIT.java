package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.consistency.History;
import io.dendrite.consistency.StaleReadChecker;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Eight threads get and write overlapping intervals of one MariaDB table through one Dendrite; an
 * independent checker then counts reads that returned a row value the database could not have held
 * while they ran. With leases there must be none; with leases turned off (the negative control) there
 * must be some, or the checker is not checking.
 */
@ExtendWith(RealServers.class)
class DendriteConsistencyIT {
  private static final int ROWS = 60;
  private static final int THREADS = 8;
  private static final Duration RUN =
      Duration.ofSeconds(Long.getLong("dendrite.consistency.seconds", 6));
  private static final Duration CONTROL_RUN = Duration.ofSeconds(6);

  /**
   * Concurrent gets, writes and misses over the near cache (L1, on by default) and the cache servers (L2); one case
   * with the near cache off reads L2 alone, one with a near cache of a few results evicts all the time.
   */
  @ParameterizedTest(name = "{0}, beta {1}, change records {2}, near cache bytes {3}")
  @CsvSource({
    "WRITE_AROUND, 1.0, false, 67108864",
    "WRITE_AROUND, 0.0, false, 67108864",
    "WRITE_THROUGH, 1.0, false, 67108864",
    "WRITE_THROUGH, 0.0, false, 67108864",
    "WRITE_THROUGH, 1.0, true, 67108864",
    "WRITE_THROUGH, 0.0, true, 67108864",
    "WRITE_THROUGH, 1.0, false, 0",
    "WRITE_AROUND, 1.0, true, 400",
    "WRITE_THROUGH, 1.0, true, 400"
  })
  void noReadIsStale(
      WritePolicy policy,
      double beta,
      boolean changeRecords,
      long nearCacheBytes,
      MySqlTestDatabase database)
      throws Exception {
    Outcome outcome =
        run(
            database,
            RUN,
            builder -> {
              builder.writePolicy(policy).maxSharedFraction(beta).nearCacheMaxBytes(nearCacheBytes);
              return changeRecords ? builder.changeRecords(ScoreTable.SET_RECORDS) : builder;
            });

    assertThat(outcome.report.count()).as("stale reads: %s", outcome.report.violations()).isZero();
    // Floors that show each mechanism ran, low enough for a busy machine: the slowest case,
    // write-around with β = 1, ran 714 gets in 5 s beside a soak.
    assertThat(outcome.report.rowReadsChecked()).isGreaterThan(500);
    assertThat(outcome.metrics.hits()).as("the cache served reads").isGreaterThan(50);
    assertThat(outcome.metrics.writes()).isGreaterThan(100);
    if (nearCacheBytes == 0) {
      assertThat(outcome.metrics.nearHits()).isZero();
    } else {
      assertThat(outcome.metrics.nearHits()).as("the near cache served reads").isGreaterThan(20);
    }
    if (nearCacheBytes == 400) {
      assertThat(outcome.metrics.nearEvictions()).as("near-cache evictions").isGreaterThan(10);
    }
    if (policy == WritePolicy.WRITE_THROUGH && changeRecords && nearCacheBytes > 0) {
      assertThat(outcome.metrics.entriesMovedToNearCache())
          .as("results writes kept in the near cache alone")
          .isPositive();
    }
  }

  /**
   * The negative control of keeping a result in the near cache alone: when the write leaves the servers' copy in
   * place, that copy goes stale, and once the near copy is evicted a get serves it; the checker catches it.
   */
  @Test
  void whenAResultKeptNearOnlyKeepsItsServersCopyTheCheckerFindsStaleReads(
      MySqlTestDatabase database) throws Exception {
    Outcome outcome =
        writeThroughControl(
            database,
            builder ->
                builder
                    .changeRecords(ScoreTable.SET_RECORDS)
                    .nearCacheMaxBytes(400)
                    .nearOnlyCopiesKeepServersCopiesForTesting());

    assertThat(outcome.metrics.entriesMovedToNearCache()).isPositive();
    assertThat(outcome.report.count())
        .as("stale reads from the servers' old copies")
        .isGreaterThan(0);
  }

  /** The negative control of the near cache: writes that leave its copies alone serve stale hits, and are caught. */
  @Test
  void whenWritesLeaveTheNearCacheAloneTheCheckerFindsStaleReads(MySqlTestDatabase database)
      throws Exception {
    Outcome outcome =
        writeThroughControl(database, Dendrite.Builder::nearCacheNotDroppedByWritesForTesting);

    assertThat(outcome.report.count()).as("stale reads from the near cache").isGreaterThan(0);
  }

  /** A negative control's run: write-through, β 1, and {@code control} turning a mechanism off. */
  private static Outcome writeThroughControl(
      MySqlTestDatabase database, UnaryOperator<Dendrite.Builder<Integer, ScoreRow>> control)
      throws Exception {
    return run(
        database,
        CONTROL_RUN,
        builder ->
            control.apply(builder.writePolicy(WritePolicy.WRITE_THROUGH).maxSharedFraction(1.0)));
  }

  @ParameterizedTest
  // Write-back needs a WriteBuffer; the writeback module tests it (RangeWriteBack*IT).
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_AROUND", "WRITE_THROUGH"})
  void withoutLeasesTheCheckerFindsStaleReads(WritePolicy policy, MySqlTestDatabase database)
      throws Exception {
    Outcome outcome =
        run(
            database,
            CONTROL_RUN,
            builder ->
                builder.writePolicy(policy).maxSharedFraction(1.0).withoutLeasesForTesting());

    assertThat(outcome.report.count()).as("stale reads without leases").isGreaterThan(0);
  }

  private record Outcome(StaleReadChecker.Report report, DendriteMetrics metrics) {}

  private static Outcome run(
      MySqlTestDatabase database,
      Duration duration,
      UnaryOperator<Dendrite.Builder<Integer, ScoreRow>> settings)
      throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(ROWS);
        RangeCache<Integer, ScoreRow> dendrite =
            settings
                .apply(
                    Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
                        .collection("scores")
                        .domain("id")
                        .range(0, ROWS - 1)
                        .cache(cacheTier.client))
                .buildRangeCache()) {
      Map<Long, Object> initial = new HashMap<>();
      IntStream.range(0, ROWS).forEach(id -> initial.put((long) id, 0L));
      History history = new History(initial);
      AtomicLong versions = new AtomicLong();
      ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
      long deadline = System.nanoTime() + duration.toNanos();

      List<Thread> workers =
          IntStream.range(0, THREADS)
              .mapToObj(
                  n ->
                      new Thread(
                          () -> {
                            try {
                              while (System.nanoTime() < deadline) {
                                step(dendrite, table, history, versions);
                              }
                            } catch (Throwable failure) {
                              failures.add(failure);
                            }
                          },
                          "consistency-" + n))
              .toList();
      workers.forEach(Thread::start);
      for (Thread worker : workers) {
        worker.join();
      }

      assertThat(failures).as("operations that failed").isEmpty();
      Outcome outcome = new Outcome(StaleReadChecker.check(history), dendrite.metrics());
      System.out.printf(
          "consistency run: %d row-reads checked, %d stale; %s%n",
          outcome.report.rowReadsChecked(), outcome.report.count(), outcome.metrics);
      return outcome;
    }
  }

  /** One random operation: half range gets, half writes (one in ten a delete), all recorded. */
  private static void step(
      RangeCache<Integer, ScoreRow> dendrite,
      ScoreTable table,
      History history,
      AtomicLong versions)
      throws Exception {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    if (random.nextBoolean()) {
      int lowerBound = random.nextInt(ROWS);
      int upperBound = Math.min(ROWS - 1, lowerBound + random.nextInt(6));
      long start = System.nanoTime();
      List<ScoreRow> rows =
          dendrite.get(
              lowerBound,
              upperBound,
              (lb, ub) -> {
                List<ScoreRow> result = table.range(lb, ub);
                Thread.sleep(
                    1); // a slower data store: widens every race window the leases must close
                return result;
              });
      long end = System.nanoTime();
      Map<Long, Object> returned = new HashMap<>();
      rows.forEach(row -> returned.put((long) row.id(), row.val()));
      history.recordRead(lowerBound, upperBound, returned, start, end);
      return;
    }
    int id = random.nextInt(ROWS);
    long start = System.nanoTime();
    if (random.nextInt(10) == 0) {
      dendrite.write(id, id, id, table::remove, ScoreTable.removing(id));
      history.recordWrite(id, null, start, System.nanoTime());
    } else {
      ScoreRow row = new ScoreRow(id, versions.incrementAndGet());
      dendrite.write(id, id, row, table::set, ScoreTable.putting(row));
      history.recordWrite(id, row.val(), start, System.nanoTime());
    }
  }
}
