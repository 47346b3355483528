package io.dendrite.coordination;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.FenceToken;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.tardis.Tardis;
import io.dendrite.tardis.TardisMetrics;
import io.dendrite.tardis.TardisRanges;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.writeback.WriteBack;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * One application process of a service for {@link PartitionedDendriteIT}: builds a {@link PartitionedDendrite} over
 * the {@link Scores} table, prints {@code SERVES <n>} whenever the number of ranges it serves changes, waits for the
 * go file, runs readers and writers over the whole domain for the given seconds while writing every operation to its
 * history file ({@link HistoryLines}), then prints {@code DONE <metrics>}.
 *
 * <p>Arguments ({@link ServiceProcesses} gives them): ZooKeeper connect string, service, member, JDBC URL, database
 * name, cache addresses, write policy, seconds, history file, go file, {@code coordinated}, {@code bypass} (the
 * negative control: this process serves every range itself), {@code tardis} (write-through with TARDIS as every
 * range's outage tolerance; the data store is down while the file {@code outage} beside the go file exists) or
 * {@code tardis-unindexed} (its negative control: misses ignore the teleported writes), the process's number (written values are unique per
 * process), the file holding the service's forwarding secret, and optionally the fewest steps (reads and writes,
 * over its threads) it takes before it stops: past the given seconds, up to five times as long, when the machine
 * was too busy to do that many in time (0, the default, stops at the seconds). The processes also share ZooKeeper
 * credentials, so the service's nodes have closed ACLs.
 */
public final class PartitionedChild {
  static final int ROWS = 60;
  static final int RANGES = 6;
  static final int THREADS = 4;

  private PartitionedChild() {}

  public static void main(String[] args) throws Exception {
    MySqlTestDatabase database = new MySqlTestDatabase(args[3], args[4]);
    WritePolicy policy = WritePolicy.valueOf(args[6]);
    Duration run = Duration.ofSeconds(Long.parseLong(args[7]));
    Path history = Path.of(args[8]);
    Path go = Path.of(args[9]);
    boolean bypass = args[10].equals("bypass");
    // TARDIS as every range's outage tolerance (write-through): while the file "outage" beside the
    // go file exists, this process's data store refuses every statement and query.
    boolean tardis = args[10].startsWith("tardis");
    Outage outage = new Outage(go.resolveSibling("outage"));
    long process = Long.parseLong(args[11]);
    long minimumSteps = args.length > 13 ? Long.parseLong(args[13]) : 0;
    try (IqClient cache =
            IqClient.builder()
                .servers(args[5].split(","))
                .requestTimeout(Duration.ofSeconds(5))
                .build();
        Scores table = new Scores(database)) {
      boolean writeBack = policy == WritePolicy.WRITE_BACK;
      boolean documentChanges = writeBack || tardis;
      MySqlStore store =
          documentChanges ? MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10)) : null;
      TardisRanges tolerance = null;
      ManyProcesses processes =
          ManyProcesses.overZooKeeper(args[0], args[1])
              .ranges(RANGES)
              .zooKeeperCredentials("scores-service", "test-only-zookeeper-password")
              .forwardingSecurity(ForwardingSecurity.sharedSecret(Path.of(args[12])))
              .member(args[2])
              .sessionTimeout(Duration.ofSeconds(3))
              // A takeover under write-back applies the range's buffered writes first; on a busy
              // machine that can pass the default 10 s, and an operation that gave up meanwhile
              // would only add noise here.
              .requestTimeout(Duration.ofSeconds(30));
      Dendrite.Builder<Integer, Scores.Score> builder =
          Dendrite.builder(DomainType.INTEGER, Scores.CODEC)
              .collection("scores")
              .domain("id")
              .range(0, ROWS - 1)
              .cache(cache)
              .query(
                  "range",
                  (lower, upper) -> {
                    outage.check();
                    return slowly(table.range(lower, upper));
                  })
              .deployment(processes);
      if (writeBack) {
        // The drains' statements carry the range's fence token; a takeover raises it in the table.
        processes.storeFence(store);
        builder
            // Each range's engine is its own, locking the range's documents in this process
            // under the range's lease; the range's buffer closes it with the range.
            .writeBack(
                WriteBack.to(store)
                    .engine(engine -> engine.replicas(1))
                    .documentAttribute(BufferedScores::id))
            .command("change", BufferedScores.changes());
      } else if (tardis) {
        // Each range's guard is its own: teleported writes listed and indexed per range, applied
        // (by its recovery workers and its misses) with the range's fence token.
        processes.storeFence(store);
        tolerance =
            TardisRanges.of(
                Tardis.builder()
                    .cache(cache)
                    .store(outage.over(store))
                    .replicas(1)
                    .partitions(8)
                    .checkInterval(Duration.ofMillis(200)));
        if (args[10].equals("tardis-unindexed")) {
          // The negative control: misses never look for teleported writes (a test-only hook).
          Method ignoring = TardisRanges.class.getDeclaredMethod("ignoringTheIndex");
          ignoring.setAccessible(true);
          ignoring.invoke(tolerance);
        }
        builder
            .writePolicy(WritePolicy.WRITE_THROUGH)
            .outageTolerance(tolerance)
            .command("change", BufferedScores.changes());
      } else {
        builder
            // Change records: a write keeps the results it touches in its process's near cache
            // alone (a killed or paused owner leaves no copy of them in the cache servers).
            .writePolicy(policy)
            .changeRecords(Scores.SET_RECORDS)
            .command("set", table.set())
            .command("remove", table.remove());
      }
      if (bypass) {
        processes.ownEveryRangeForTesting();
      }
      PartitionedDendrite<Integer, Scores.Score> dendrite =
          (PartitionedDendrite<Integer, Scores.Score>) builder.build();
      Thread reporter = new Thread(() -> reportServed(dendrite), "served-reporter");
      reporter.setDaemon(true);
      reporter.start();
      while (!Files.exists(go)) {
        Thread.sleep(20);
      }
      AtomicLong versions = new AtomicLong(process * 1_000_000_000L);
      List<String> failures = new ArrayList<>();
      Map<String, RuntimeException> firstOfEachKind = new TreeMap<>();
      try (BufferedWriter out = Files.newBufferedWriter(history)) {
        HistoryLines lines = new HistoryLines(out);
        long deadline = System.nanoTime() + run.toNanos();
        // A starved process (four soaks on two cores did 25 steps in 10 s) goes on
        // until it has done enough for its checks to mean something, but not for ever.
        long latest = deadline + 5 * run.toNanos();
        AtomicLong steps = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        for (int n = 0; n < THREADS; n++) {
          Thread worker =
              new Thread(
                  () -> {
                    while (System.nanoTime() < deadline
                        || (steps.get() < minimumSteps && System.nanoTime() < latest)) {
                      steps.incrementAndGet();
                      try {
                        if (documentChanges) {
                          bufferedStep(dendrite, lines, versions);
                        } else {
                          step(dendrite, lines, versions);
                        }
                      } catch (RuntimeException failed) {
                        synchronized (failures) {
                          failures.add(failed.toString());
                          firstOfEachKind.putIfAbsent(failed.getClass().getName(), failed);
                        }
                      }
                    }
                  },
                  "worker-" + n);
          worker.start();
          workers.add(worker);
        }
        for (Thread worker : workers) {
          worker.join();
        }
      }
      // Each kind of failure once, with its message: the failures of a run are usually many of a
      // few kinds.
      Map<String, String> kinds = new TreeMap<>();
      failures.forEach(failure -> kinds.putIfAbsent(failure.split(":", 2)[0], failure));
      // The stack of the first failure of each kind, line by line, for the test's log: a failure
      // with no message
      // says nothing without it.
      firstOfEachKind
          .values()
          .forEach(
              failed -> {
                java.io.StringWriter trace = new java.io.StringWriter();
                failed.printStackTrace(new java.io.PrintWriter(trace));
                trace
                    .toString()
                    .lines()
                    .forEach(line -> System.out.println("FAILURE-TRACE " + line));
              });
      System.out.println("FAILURES " + failures.size() + " " + kinds.values());
      System.out.println(
          "FAILURE-KINDS "
              + failures.stream()
                  .map(failure -> failure.split(":", 2)[0])
                  .collect(Collectors.toCollection(TreeSet::new)));
      if (tolerance != null) {
        // What its open ranges' guards absorbed while the data store was down, and recovered since.
        TardisMetrics ranges = tolerance.total();
        System.out.println(
            "TARDIS absorbed "
                + ranges.failedWritesAbsorbed()
                + " recovered "
                + (ranges.recovered() + ranges.recoveredByForeground()));
      }
      System.out.println("DONE " + dendrite.metrics());
      dendrite.close();
      if (store != null) {
        store.close();
      }
      System.out.println("CLOSED");
    }
  }

  /** A data store that is down while a file exists: what the test switches for every process at once. */
  private record Outage(Path file) {
    void check() {
      if (Files.exists(file)) {
        throw new DataStoreUnavailableException(
            "the data store is down (" + file + " exists)", null, true);
      }
    }

    DataStore over(DataStore store) {
      return new DataStore() {
        @Override
        public void apply(List<EntityChanges> batch) {
          check();
          store.apply(batch);
        }

        @Override
        public void apply(List<EntityChanges> batch, FenceToken owner) {
          check();
          store.apply(batch, owner);
        }

        @Override
        public Optional<Entity> read(EntityKey key) {
          check();
          return store.read(key);
        }

        @Override
        public List<Entity> readRange(
            String collection, String field, Object lowerBound, Object upperBound) {
          check();
          return store.readRange(collection, field, lowerBound, upperBound);
        }

        @Override
        public void close() {}
      };
    }
  }

  /** A slower data store: widens every race window the leases and the forwarding must close. */
  private static List<Scores.Score> slowly(List<Scores.Score> rows) throws InterruptedException {
    Thread.sleep(1);
    return rows;
  }

  private static void reportServed(PartitionedDendrite<?, ?> dendrite) {
    int last = -1;
    while (true) {
      int now = dendrite.servedRanges().size();
      if (now != last) {
        System.out.println("SERVES " + now);
        last = now;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Under write-back: half range gets, as {@link #step}; then sets of {@code val} and increments of {@code cnt}. */
  private static void bufferedStep(
      PartitionedDendrite<Integer, Scores.Score> dendrite,
      HistoryLines lines,
      AtomicLong versions) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    if (random.nextBoolean()) {
      read(dendrite, lines, random);
      return;
    }
    int id = random.nextInt(ROWS);
    long start = System.nanoTime();
    if (random.nextInt(5) < 2) {
      lines.incrementing(id, start);
      dendrite.write("change", id, id, BufferedScores.inc(id));
      lines.incremented(id, start, System.nanoTime());
      return;
    }
    long value = versions.incrementAndGet();
    lines.writing(id, value, start);
    dendrite.write("change", id, id, BufferedScores.set(id, value));
    lines.wrote(id, value, start, System.nanoTime());
  }

  private static void read(
      PartitionedDendrite<Integer, Scores.Score> dendrite,
      HistoryLines lines,
      ThreadLocalRandom random) {
    int lower = random.nextInt(ROWS);
    int upper = Math.min(ROWS - 1, lower + random.nextInt(6));
    long start = System.nanoTime();
    List<Scores.Score> rows = dendrite.get("range", lower, upper);
    long end = System.nanoTime();
    lines.read(
        lower,
        upper,
        start,
        end,
        rows.stream().map(row -> row.id() + ":" + row.val()).collect(Collectors.joining(",")));
  }

  /** One random operation: half range gets over up to 6 rows (often crossing ranges), half point writes. */
  private static void step(
      PartitionedDendrite<Integer, Scores.Score> dendrite,
      HistoryLines lines,
      AtomicLong versions) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    if (random.nextBoolean()) {
      read(dendrite, lines, random);
      return;
    }
    int id = random.nextInt(ROWS);
    Long value = random.nextInt(10) == 0 ? null : versions.incrementAndGet();
    long start = System.nanoTime();
    // Before the write: if it never returns, the checker must allow its value from now on.
    lines.writing(id, value, start);
    if (value == null) {
      dendrite.write("remove", id, id, id);
    } else {
      dendrite.write("set", id, id, new Scores.SetVal(id, value));
    }
    lines.wrote(id, value, start, System.nanoTime());
  }

  /**
   * The history file, one line per event, written through as it happens, so that the file of a killed process
   * holds everything it did up to then: {@code R lower upper start end id:val,...} for a get, {@code w id val|- start}
   * before a write and {@code W id val|- start end} after it returned ({@link HistoryFiles} reads them); under
   * write-back also {@code i id start} before an increment and {@code I id start end} after it returned.
   */
  static final class HistoryLines {
    private final BufferedWriter out;

    HistoryLines(BufferedWriter out) {
      this.out = out;
    }

    synchronized void read(int lower, int upper, long start, long end, String returned) {
      line("R " + lower + " " + upper + " " + start + " " + end + " " + returned);
    }

    synchronized void writing(int id, Long value, long start) {
      line("w " + id + " " + (value == null ? "-" : value) + " " + start);
    }

    synchronized void incrementing(int id, long start) {
      line("i " + id + " " + start);
    }

    synchronized void incremented(int id, long start, long end) {
      line("I " + id + " " + start + " " + end);
    }

    synchronized void wrote(int id, Long value, long start, long end) {
      line("W " + id + " " + (value == null ? "-" : value) + " " + start + " " + end);
    }

    private void line(String text) {
      try {
        out.write(text);
        out.newLine();
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
