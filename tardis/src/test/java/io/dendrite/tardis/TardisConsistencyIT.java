package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.consistency.History;
import io.dendrite.consistency.StaleReadChecker;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
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
import java.util.Optional;
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
 * The stale-read checker over TARDIS through normal, failed, recovery and normal mode again: 8 threads write unique
 * names to shared documents and read them while the database is cut for 6 s, most documents uncached, with slow
 * recovery so that buffered writes stay a while after the database is back. Every read that returned must have
 * returned a value the document could have held while it ran; a final read of the database after recovery is
 * checked the same way, so a lost write shows up as stale. Unavailable reads are not recorded; a write that failed
 * is recorded as possibly applied at any time after it started.
 */
@ExtendWith(RealServers.class)
class TardisConsistencyIT {
  /** Many, so that most documents written during the outage are not cached when the database is back. */
  private static final int DOCUMENTS = 10_000;

  private static final int THREADS = 8;

  /**
   * DIS, TARD and TARDIS (and TARDIS with {@link Solution#CONTEXTUAL}) side by side through one outage, each on a
   * table of its own, and the control: TAR serving
   * its recovery misses from the database, which reads what buffered writes changed since.
   */
  @Test
  void techniquesServeNoStaleReadWhileTheControlDoes(MySqlTestDatabase database) throws Exception {
    Map<String, Run> runs = new LinkedHashMap<>();
    runs.put("dis", new Run(Technique.DIS, builder -> builder));
    runs.put("tard", new Run(Technique.TARD, builder -> builder));
    runs.put("tardis", new Run(Technique.TARDIS, builder -> builder));
    runs.put(
        "contextual", new Run(Technique.TARDIS, builder -> builder.solution(Solution.CONTEXTUAL)));
    runs.put("control", new Run(Technique.TAR, Tardis.Builder::queryingRecoveryMisses));

    Map<String, StaleReadChecker.Report> reports = staleReads(database, runs);

    assertThat(reports.get("dis").count()).as("DIS").isZero();
    assertThat(reports.get("tard").count()).as("TARD").isZero();
    assertThat(reports.get("tardis").count()).as("TARDIS").isZero();
    assertThat(reports.get("contextual").count()).as("TARDIS, Contextual").isZero();
    assertThat(reports.get("control").count()).as("the control").isPositive();
  }

  /** One technique's run: its own table, instance, threads and history. */
  private static final class Run {
    final Technique technique;
    final UnaryOperator<Tardis.Builder> settings;
    History history;
    Tardis tardis;
    final LongAdder unavailable = new LongAdder();

    Run(Technique technique, UnaryOperator<Tardis.Builder> settings) {
      this.technique = technique;
      this.settings = settings;
    }
  }

  private Map<String, StaleReadChecker.Report> staleReads(
      MySqlTestDatabase database, Map<String, Run> runs) throws Exception {
    Map<Long, Object> initial = new HashMap<>();
    for (int id = 0; id < DOCUMENTS; id++) {
      initial.put((long) id, "u" + id);
    }
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      for (String table : runs.keySet()) {
        statement.execute(
            "CREATE TABLE " + table + " (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
      }
    }
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService threads = Executors.newFixedThreadPool(THREADS * runs.size());
    String url = database.jdbcUrl();
    List<Tardis> opened = new ArrayList<>();
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
        for (int id = 0; id < DOCUMENTS; id++) {
          seed.add(
              new EntityChanges(
                  new EntityKey(table, id),
                  ChangeSequence.of(insert(Map.of("name", "u" + id, "score", 0)))));
        }
        direct.apply(seed);
        run.history = new History(initial);
        run.tardis =
            run.settings
                .apply(
                    Tardis.builder()
                        .cache(cache.client)
                        .store(viaProxy)
                        .technique(run.technique)
                        .replicas(2)
                        .partitions(16)
                        // One worker: buffered writes outlive the outage for a while.
                        .drainThreads(1)
                        .checkInterval(Duration.ofMillis(200)))
                .build();
        opened.add(run.tardis);
        for (int thread = 0; thread < THREADS; thread++) {
          int own = thread;
          running.add(threads.submit(() -> readAndWrite(table, run, own, stop)));
        }
      }
      OutagePhases.run(proxy, () -> runs.values().stream().map(run -> run.tardis.mode()).toList());
      stop.set(true);
      for (Future<?> thread : running) {
        thread.get(60, TimeUnit.SECONDS);
      }
      Map<String, StaleReadChecker.Report> reports = new LinkedHashMap<>();
      for (Map.Entry<String, Run> entry : runs.entrySet()) {
        String table = entry.getKey();
        Run run = entry.getValue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (run.tardis.metrics().bufferedDocuments() > 0) {
          assertThat(System.nanoTime()).as("waiting for %s's recovery", table).isLessThan(deadline);
          Thread.sleep(100);
        }
        // The database after recovery, read as one more reader would: a lost write reads stale
        // here.
        for (Entity row : direct.readRange(table, "id", 0, DOCUMENTS - 1)) {
          long now = System.nanoTime();
          long id = ((Number) row.key().id()).longValue();
          run.history.recordRead(id, id, Map.of(id, row.fields().get("name")), now, now);
        }
        StaleReadChecker.Report report = StaleReadChecker.check(run.history);
        TardisMetrics metrics = run.tardis.metrics();
        System.out.printf(
            "TardisConsistencyIT %s (%s): %d row reads checked, %d stale, %d unavailable,"
                + " %d absorbed, %d recovered (%d by misses and writes)%n",
            table,
            run.technique,
            report.rowReadsChecked(),
            report.count(),
            run.unavailable.sum(),
            metrics.failedWritesAbsorbed(),
            metrics.recovered(),
            metrics.recoveredByForeground());
        report.violations().stream().limit(3).forEach(System.out::println);
        assertThat(metrics.failedWritesAbsorbed())
            .as("%s's writes buffered during the outage", table)
            .isPositive();
        reports.put(table, report);
      }
      return reports;
    }
  }

  /** One thread of a run: unique names written to random documents, and reads, until {@code stop}. */
  private static Void readAndWrite(String table, Run run, int own, AtomicBoolean stop) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int i = 0; !stop.get(); i++) {
      int id = random.nextInt(DOCUMENTS);
      EntityKey key = new EntityKey(table, id);
      long start = System.nanoTime();
      if (random.nextInt(3) == 0) {
        String name = "t" + own + "-" + i;
        try {
          run.tardis.write(key, ChangeSequence.of(set("name", name)));
          run.history.recordWrite(id, name, start, System.nanoTime());
        } catch (RuntimeException failed) {
          run.history.recordWrite(id, name, start, Long.MAX_VALUE);
        }
      } else {
        try {
          Optional<Entity> read = run.tardis.read(key);
          Object name = read.map(found -> found.fields().get("name")).orElse(null);
          Map<Long, Object> returned = new HashMap<>();
          if (name != null) {
            returned.put((long) id, name);
          }
          run.history.recordRead(id, id, returned, start, System.nanoTime());
        } catch (TardisUnavailableException refused) {
          run.unavailable.increment();
        }
      }
    }
    return null;
  }
}
