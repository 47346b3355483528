package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;

import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The recovery benchmark of the thesis' §4.6.2, scaled to this machine (not a test: {@code dev/bench --tardis} runs
 * it). Per technique, recovery workers and key distribution, on a fresh IQ server and table:
 *
 * <ol>
 *   <li>normal mode: workload A (50 % reads, 50 % updates) for a few seconds, for the normal-mode throughput;
 *   <li>the database is cut (a {@link CuttableProxy}); write-only updates of 95 % of the documents for the outage;
 *       failed-mode throughput, and how many writes failed (0 expected) against the database alone (every one);
 *   <li>the database is back; workload A goes on until nothing is buffered (recovery duration) or the cap.
 * </ol>
 *
 * <p>Settings (system properties, defaults in brackets): {@code tardis.bench.records} [20000], {@code
 * .threads} [8], {@code .outageSeconds} [10], {@code .normalSeconds} [5], {@code .capSeconds} [60], {@code
 * .workers} [0,20], {@code .alpha} [50], {@code .batches} [alpha: documents per store round, a number or
 * alpha], {@code .techniques} [TAR,DIS,TARD,TARDIS], {@code .distributions}
 * [uniform,zipfian], {@code .solution} [RECON], {@code .report} [target/tardis-recovery.md]. Workers and α are lists: every combination runs
 * (α once for 0 workers, where it means nothing), and with more than one worker count the recovery duration and the
 * recovery-phase throughput against the workers, a series per technique, distribution and α (the thesis' Figure
 * 4.7), are drawn as PNG next to the report ({@code tardis-recovery-vs-workers.png}, {@code
 * tardis-throughput-vs-workers.png}).
 */
@ExtendWith(RealServers.class)
class TardisRecoveryProbe {
  private static final int PARTITIONS = 211; // as §4.6.3

  private final int records = Integer.getInteger("tardis.bench.records", 20_000);
  private final int threads = Integer.getInteger("tardis.bench.threads", 8);
  private final int outageSeconds = Integer.getInteger("tardis.bench.outageSeconds", 10);
  private final int normalSeconds = Integer.getInteger("tardis.bench.normalSeconds", 5);
  private final int capSeconds = Integer.getInteger("tardis.bench.capSeconds", 60);
  private final Solution solution =
      Solution.valueOf(System.getProperty("tardis.bench.solution", "RECON"));

  record Result(
      Technique technique,
      int workers,
      int alpha,
      int batch,
      String distribution,
      double normalOps,
      double failedOps,
      long failedWrites,
      long aloneFailed,
      long aloneTried,
      int buffered,
      double recoverySeconds,
      int left,
      double recoveryOps) {}

  @Test
  void recoveryDurations(MySqlTestDatabase database) throws Exception {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE tardis_bench (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
    }
    List<Result> results = new ArrayList<>();
    for (String distribution : list("tardis.bench.distributions", "uniform,zipfian")) {
      for (int workers : numbers("tardis.bench.workers", "0,20")) {
        List<Integer> alphas = numbers("tardis.bench.alpha", "50");
        // α is how many documents a worker applies per partition: without workers it means nothing.
        for (int alpha : workers == 0 ? alphas.subList(0, 1) : alphas) {
          // Documents per store round: α (the default) or 1, as the thesis' workers apply them.
          List<String> batches = list("tardis.bench.batches", "alpha");
          for (String batchName : workers == 0 ? batches.subList(0, 1) : batches) {
            int batch = batchName.equals("alpha") ? alpha : Integer.parseInt(batchName);
            for (String technique : list("tardis.bench.techniques", "TAR,DIS,TARD,TARDIS")) {
              Result result =
                  run(database, Technique.valueOf(technique), workers, alpha, batch, distribution);
              System.out.println("TardisRecoveryProbe " + result);
              results.add(result);
            }
          }
        }
      }
    }
    Path report = Path.of(System.getProperty("tardis.bench.report", "target/tardis-recovery.md"));
    write(report, results);
    System.out.println("TardisRecoveryProbe report: " + report.toAbsolutePath());
    if (results.stream().map(Result::workers).distinct().count() > 1) {
      Path dir = report.toAbsolutePath().getParent();
      RecoverySweepPlot.recoveryVsWorkers(
          results, capSeconds, dir.resolve("tardis-recovery-vs-workers.png"));
      RecoverySweepPlot.throughputVsWorkers(
          results, dir.resolve("tardis-throughput-vs-workers.png"));
      System.out.println("TardisRecoveryProbe plots: " + dir);
    }
  }

  private Result run(
      MySqlTestDatabase database,
      Technique technique,
      int workers,
      int alpha,
      int batch,
      String distribution)
      throws Exception {
    String url = database.jdbcUrl();
    try (MySqlStore direct = MySqlStore.open(url, 4, Duration.ofSeconds(30))) {
      try (Connection connection = database.connect();
          Statement statement = connection.createStatement()) {
        statement.execute("TRUNCATE TABLE tardis_bench");
      }
      for (int from = 0; from < records; from += 1_000) {
        List<EntityChanges> seed = new ArrayList<>();
        for (int id = from; id < Math.min(records, from + 1_000); id++) {
          seed.add(
              new EntityChanges(
                  key(id), ChangeSequence.of(insert(Map.of("name", "u" + id, "score", 0)))));
        }
        direct.apply(seed);
      }
    }
    IntSupplier documents = distribution.equals("zipfian") ? new Zipf(records) : uniform(records);
    try (CuttableProxy proxy = CuttableProxy.inFrontOf(url);
        MySqlStore viaProxy =
            MySqlStore.open(proxy.routed(url), threads + workers + 4, Duration.ofSeconds(1));
        EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(1).pinnedMemoryBytes(1L << 30).start();
        Tardis tardis =
            Tardis.builder()
                .replicas(1)
                .cache(cache.client)
                .store(viaProxy)
                .technique(technique)
                .solution(solution)
                .partitions(PARTITIONS)
                .drainThreads(workers)
                .drainBatch(alpha)
                .storeRound(batch)
                .checkInterval(Duration.ofMillis(500))
                .build()) {
      for (int id = 0; id < records / 10; id++) {
        tardis.read(key(id)); // 10 % of the documents staged in the cache
      }
      double normalOps = phase(tardis, documents, normalSeconds, 50, null).opsPerSecond;

      proxy.cut();
      long aloneTried = 0;
      long aloneFailed = 0;
      for (int i = 0; i < 20; i++) {
        aloneTried++;
        try {
          viaProxy.apply(
              List.of(new EntityChanges(key(i), ChangeSequence.of(set("name", "alone")))));
        } catch (RuntimeException failed) {
          aloneFailed++;
        }
      }
      // Write-only over 95 % of the documents (the thesis' outage phase).
      IntSupplier most = () -> documents.getAsInt() % Math.max(1, records * 95 / 100);
      Phase failed = phase(tardis, most, outageSeconds, 0, null);
      if (failed.failures > 0) {
        System.out.println("TardisRecoveryProbe first failed write: " + failed.firstFailure);
      }
      int buffered = tardis.metrics().bufferedDocuments();

      proxy.restore();
      long start = System.nanoTime();
      AtomicBoolean recovered = new AtomicBoolean();
      Phase recovery =
          phase(
              tardis,
              documents,
              capSeconds,
              50,
              () -> {
                // The mode first (no request): a poll of the metrics reads and parses every
                // partition, and polling them every 250 ms took a quarter of the CPU of a recovery.
                if (!recovered.get()
                    && tardis.mode() == Mode.NORMAL
                    && tardis.metrics().bufferedDocuments() == 0) {
                  recovered.set(true);
                }
                return recovered.get();
              });
      double seconds = (System.nanoTime() - start) / 1e9;
      int left = tardis.metrics().bufferedDocuments();
      return new Result(
          technique,
          workers,
          alpha,
          batch,
          distribution,
          normalOps,
          failed.opsPerSecond,
          failed.failures,
          aloneFailed,
          aloneTried,
          buffered,
          recovered.get() ? seconds : Double.NaN,
          left,
          recovery.opsPerSecond);
    }
  }

  private record Phase(double opsPerSecond, long failures, String firstFailure) {}

  /**
   * {@code threads} threads, each {@code readPercent} % reads and the rest updates of one field, for {@code
   * seconds} or until {@code done} (polled every 250 ms) says so.
   */
  private Phase phase(
      Tardis tardis,
      IntSupplier documents,
      int seconds,
      int readPercent,
      java.util.function.BooleanSupplier done)
      throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    LongAdder ops = new LongAdder();
    LongAdder failures = new LongAdder();
    java.util.concurrent.atomic.AtomicReference<String> firstFailure =
        new java.util.concurrent.atomic.AtomicReference<>("");
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long start = System.nanoTime();
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        running.add(
            pool.submit(
                () -> {
                  ThreadLocalRandom random = ThreadLocalRandom.current();
                  while (!stop.get()) {
                    EntityKey key = key(documents.getAsInt());
                    try {
                      if (random.nextInt(100) < readPercent) {
                        tardis.read(key);
                      } else {
                        tardis.write(key, ChangeSequence.of(set("name", "n" + random.nextInt())));
                      }
                      ops.increment();
                    } catch (TardisUnavailableException unavailable) {
                      // a refused miss: not an operation done, not a failed write
                    } catch (RuntimeException failed) {
                      failures.increment();
                      firstFailure.compareAndSet("", failed.toString());
                    }
                  }
                  return null;
                }));
      }
      long until = start + TimeUnit.SECONDS.toNanos(seconds);
      while (System.nanoTime() < until && (done == null || !done.getAsBoolean())) {
        Thread.sleep(250);
      }
      stop.set(true);
      for (Future<?> thread : running) {
        thread.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    return new Phase(
        ops.sum() / ((System.nanoTime() - start) / 1e9), failures.sum(), firstFailure.get());
  }

  private static void write(Path report, List<Result> results) throws IOException {
    StringBuilder out = new StringBuilder();
    out.append(
        "| distribution | AR workers | α | documents per store round | technique | normal ops/s | failed-mode ops/s | failed"
            + " writes (TARDIS / database alone) | buffered documents | recovery (s) | left at cap |"
            + " recovery ops/s |\n");
    out.append("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Result r : results) {
      out.append(
          String.format(
              "| %s | %d | %s | %s | %s | %.0f | %.0f | %d / %d of %d | %d | %s | %d | %.0f |%n",
              r.distribution,
              r.workers,
              r.workers == 0 ? "–" : String.valueOf(r.alpha),
              r.workers == 0 ? "–" : String.valueOf(r.batch),
              r.technique,
              r.normalOps,
              r.failedOps,
              r.failedWrites,
              r.aloneFailed,
              r.aloneTried,
              r.buffered,
              Double.isNaN(r.recoverySeconds)
                  ? "did not finish"
                  : String.format("%.1f", r.recoverySeconds),
              r.left,
              r.recoveryOps));
    }
    Files.createDirectories(report.toAbsolutePath().getParent());
    Files.writeString(report, out);
    System.out.print(out);
  }

  private static List<String> list(String property, String defaults) {
    return Arrays.asList(System.getProperty(property, defaults).split(","));
  }

  private static List<Integer> numbers(String property, String defaults) {
    return list(property, defaults).stream().map(String::strip).map(Integer::valueOf).toList();
  }

  private static EntityKey key(int id) {
    return new EntityKey("tardis_bench", id);
  }

  private static IntSupplier uniform(int n) {
    return () -> ThreadLocalRandom.current().nextInt(n);
  }

  /** Zipfian ranks over [0, n) with YCSB's constant 0.99 (Gray et al.'s method, as YCSB's generator). */
  private static final class Zipf implements IntSupplier {
    private static final double THETA = 0.99;
    private final int n;
    private final double alpha;
    private final double zetan;
    private final double eta;

    Zipf(int n) {
      this.n = n;
      double zeta2 = 1 + Math.pow(0.5, THETA);
      double sum = 0;
      for (int i = 1; i <= n; i++) {
        sum += 1 / Math.pow(i, THETA);
      }
      this.zetan = sum;
      this.alpha = 1 / (1 - THETA);
      this.eta = (1 - Math.pow(2.0 / n, 1 - THETA)) / (1 - zeta2 / zetan);
    }

    @Override
    public int getAsInt() {
      double u = ThreadLocalRandom.current().nextDouble();
      double uz = u * zetan;
      if (uz < 1) {
        return 0;
      }
      if (uz < 1 + Math.pow(0.5, THETA)) {
        return 1;
      }
      return Math.min(n - 1, (int) (n * Math.pow(eta * u - eta + 1, alpha)));
    }
  }
}
