package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.consistency.History;
import io.dendrite.consistency.StaleReadChecker;
import io.dendrite.core.DendriteBusyException;
import io.dendrite.core.DomainType;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The stale-read checker over {@link TardisDendrite}'s cached range results through normal, failed, recovery and
 * normal mode again: threads write unique names to one or two adjacent rows and read ranges of up to 10 rows while
 * the database is cut for 6 s, with slow recovery so that buffered writes stay a while after it is back. Every range
 * read that returned must hold, for each row, a value the row could have held while the read ran; a final read of
 * the database after recovery is checked too, so a lost write reads stale. Refused reads are not recorded; a write
 * that failed is recorded as possibly applied at any time after it started.
 */
@ExtendWith(RealServers.class)
class TardisRangeConsistencyIT {
  private static final int ROWS = 2_000;
  private static final int THREADS = 4;

  /**
   * DIS, TARD and TARDIS side by side through one outage, each over a table of its own, and two controls: TAR
   * serving its recovery misses from the database, and TARDIS whose misses cannot see the index of buffered range
   * writes (the mapping of Table 4.2), so they query a database that lacks them.
   */
  @Test
  void techniquesServeNoStaleRangeWhileTheControlsDo(MySqlTestDatabase database) throws Exception {
    Map<String, Run> runs = new LinkedHashMap<>();
    runs.put("rdis", new Run(Technique.DIS, tardis -> tardis, range -> range));
    runs.put("rtard", new Run(Technique.TARD, tardis -> tardis, range -> range));
    runs.put("rtardis", new Run(Technique.TARDIS, tardis -> tardis, range -> range));
    runs.put(
        "rtarquery",
        new Run(Technique.TAR, Tardis.Builder::queryingRecoveryMisses, range -> range));
    runs.put(
        "rnoindex",
        new Run(Technique.TARDIS, tardis -> tardis, TardisDendrite.Builder::ignoringTheIndex));

    Map<String, StaleReadChecker.Report> reports = staleReads(database, runs);

    assertThat(reports.get("rdis").count()).as("DIS").isZero();
    assertThat(reports.get("rtard").count()).as("TARD").isZero();
    assertThat(reports.get("rtardis").count()).as("TARDIS").isZero();
    assertThat(reports.get("rtarquery").count()).as("TAR querying recovery misses").isPositive();
    assertThat(reports.get("rnoindex").count()).as("TARDIS without the index").isPositive();
  }

  /** One technique's run: its own table, instance, threads and history. */
  private static final class Run {
    final Technique technique;
    final UnaryOperator<Tardis.Builder> settings;
    final UnaryOperator<TardisDendrite.Builder<Long, NamedRow>> rangeSettings;
    History history;
    TardisDendrite<Long, NamedRow> ranges;
    final LongAdder unavailable = new LongAdder();
    final LongAdder reads = new LongAdder();

    Run(
        Technique technique,
        UnaryOperator<Tardis.Builder> settings,
        UnaryOperator<TardisDendrite.Builder<Long, NamedRow>> rangeSettings) {
      this.technique = technique;
      this.settings = settings;
      this.rangeSettings = rangeSettings;
    }
  }

  private Map<String, StaleReadChecker.Report> staleReads(
      MySqlTestDatabase database, Map<String, Run> runs) throws Exception {
    Map<Long, Object> initial = new HashMap<>();
    for (int id = 0; id < ROWS; id++) {
      initial.put((long) id, "u" + id);
    }
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      for (String table : runs.keySet()) {
        statement.execute(
            "CREATE TABLE " + table + " (id INT PRIMARY KEY, pos INT, name VARCHAR(64))");
        statement.execute("CREATE INDEX " + table + "_pos ON " + table + " (pos)");
      }
    }
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService threads = Executors.newFixedThreadPool(THREADS * runs.size());
    String url = database.jdbcUrl();
    List<TardisDendrite<Long, NamedRow>> opened = new ArrayList<>();
    try (MySqlStore direct = MySqlStore.open(url, 2, Duration.ofSeconds(10));
        CuttableProxy proxy = CuttableProxy.inFrontOf(url);
        MySqlStore viaProxy =
            MySqlStore.open(proxy.routed(url), THREADS * runs.size() + 4, Duration.ofSeconds(1));
        EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(2).pinnedMemoryBytes(256L << 20).start();
        AutoCloseable load = LoadShutdown.of(stop, threads, opened)) {
      List<Future<?>> running = new ArrayList<>();
      for (Map.Entry<String, Run> entry : runs.entrySet()) {
        String table = entry.getKey();
        Run run = entry.getValue();
        List<EntityChanges> seed = new ArrayList<>();
        for (int id = 0; id < ROWS; id++) {
          seed.add(
              new EntityChanges(
                  new EntityKey(table, id),
                  ChangeSequence.of(insert(Map.of("pos", id, "name", "u" + id)))));
        }
        direct.apply(seed);
        run.history = new History(initial);
        run.ranges =
            run.rangeSettings
                .apply(
                    TardisDendrite.builder(DomainType.LONG, NamedRow.CODEC)
                        .tardis(
                            run.settings.apply(
                                Tardis.builder()
                                    .cache(cache.client)
                                    .store(viaProxy)
                                    .technique(run.technique)
                                    .replicas(2)
                                    .partitions(16)
                                    // One worker: buffered writes outlive the outage a while.
                                    .drainThreads(1)
                                    .drainBatch(2)
                                    .checkInterval(Duration.ofMillis(200))))
                        .collection(table)
                        .domain("pos")
                        .range(0L, (long) ROWS - 1)
                        .rowOf(NamedRow::of)
                        .cacheUpdates(NamedRow::updateOf))
                .build();
        opened.add(run.ranges);
        for (int thread = 0; thread < THREADS; thread++) {
          int own = thread;
          running.add(threads.submit(() -> readAndWrite(table, run, own, stop)));
        }
      }
      OutagePhases.run(proxy, () -> runs.values().stream().map(run -> run.ranges.mode()).toList());
      stop.set(true);
      for (Future<?> thread : running) {
        thread.get(60, TimeUnit.SECONDS);
      }
      Map<String, StaleReadChecker.Report> reports = new LinkedHashMap<>();
      for (Map.Entry<String, Run> entry : runs.entrySet()) {
        String table = entry.getKey();
        Run run = entry.getValue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (run.ranges.metrics().bufferedDocuments() > 0) {
          assertThat(System.nanoTime()).as("waiting for %s's recovery", table).isLessThan(deadline);
          Thread.sleep(100);
        }
        // The database after recovery, read as one more reader would: a lost write reads stale.
        for (Entity row : direct.readRange(table, "id", 0, ROWS - 1)) {
          long now = System.nanoTime();
          long id = ((Number) row.key().id()).longValue();
          run.history.recordRead(id, id, Map.of(id, row.fields().get("name")), now, now);
        }
        StaleReadChecker.Report report = StaleReadChecker.check(run.history);
        TardisMetrics metrics = run.ranges.metrics();
        System.out.printf(
            "TardisRangeConsistencyIT %s (%s): %d range reads (%d row reads checked), %d stale,"
                + " %d unavailable, %d absorbed, %d recovered (%d by misses and writes), %s%n",
            table,
            run.technique,
            run.reads.sum(),
            report.rowReadsChecked(),
            report.count(),
            run.unavailable.sum(),
            metrics.failedWritesAbsorbed(),
            metrics.recovered(),
            metrics.recoveredByForeground(),
            run.ranges.dendriteMetrics());
        report.violations().stream().limit(3).forEach(System.out::println);
        assertThat(metrics.failedWritesAbsorbed())
            .as("%s's writes buffered during the outage", table)
            .isPositive();
        reports.put(table, report);
      }
      return reports;
    }
  }

  /**
   * One thread of a run until {@code stop}: a third of its operations write unique names to one row or two adjacent
   * ones, the rest read a range of 1 to 10 rows.
   */
  private static Void readAndWrite(String table, Run run, int own, AtomicBoolean stop) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int i = 0; !stop.get(); i++) {
      long start = System.nanoTime();
      if (random.nextInt(3) == 0) {
        long first = random.nextInt(ROWS - 1);
        long last = random.nextBoolean() ? first : first + 1;
        String name = "t" + own + "-" + i;
        List<EntityChanges> changes = new ArrayList<>();
        for (long id = first; id <= last; id++) {
          changes.add(
              new EntityChanges(new EntityKey(table, id), ChangeSequence.of(set("name", name))));
        }
        long end;
        try {
          run.ranges.write(first, last, DocumentChanges.of(changes));
          end = System.nanoTime();
        } catch (RuntimeException failed) {
          end = Long.MAX_VALUE;
        }
        for (long id = first; id <= last; id++) {
          run.history.recordWrite(id, name, start, end);
        }
      } else {
        long lo = random.nextInt(ROWS);
        long hi = Math.min(ROWS - 1, lo + random.nextInt(10));
        try {
          List<NamedRow> rows = run.ranges.get(lo, hi);
          Map<Long, Object> returned = new HashMap<>();
          rows.forEach(row -> returned.put(row.id(), row.name()));
          run.history.recordRead(lo, hi, returned, start, System.nanoTime());
          run.reads.increment();
        } catch (TardisUnavailableException | DendriteBusyException refused) {
          run.unavailable.increment();
        }
      }
    }
    return null;
  }
}
