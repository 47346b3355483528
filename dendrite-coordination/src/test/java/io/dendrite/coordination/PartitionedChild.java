package io.dendrite.coordination;

import io.dendrite.core.DomainType;
import io.dendrite.core.OwnedRange;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.document.RangeWriteBack;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * name, cache addresses, write policy, seconds, history file, go file, {@code coordinated} or {@code bypass} (the
 * negative control: this process serves every range itself), the process's number (written values are unique per
 * process), the file holding the service's forwarding secret. The processes also share ZooKeeper credentials, so the
 * service's nodes have closed ACLs.
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
    long process = Long.parseLong(args[11]);
    try (IqClient cache =
            IqClient.builder()
                .servers(args[5].split(","))
                .requestTimeout(Duration.ofSeconds(5))
                .build();
        Scores table = new Scores(database)) {
      boolean writeBack = policy == WritePolicy.WRITE_BACK;
      MySqlStore store =
          writeBack ? MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10)) : null;
      PartitionedDendrite.Builder<Integer, Scores.Score> builder =
          PartitionedDendrite.builder(DomainType.INTEGER, Scores.CODEC)
              .collection("scores")
              .domain("id")
              .range(0, ROWS - 1)
              .ranges(RANGES)
              .cache(cache)
              .query("range", (lower, upper) -> slowly(table.range(lower, upper)))
              .zooKeeper(args[0], args[1])
              .zooKeeperCredentials("scores-service", "test-only-zookeeper-password")
              .forwardingSecurity(ForwardingSecurity.sharedSecret(Path.of(args[12])))
              .member(args[2])
              .sessionTimeout(Duration.ofSeconds(3))
              // A takeover under write-back applies the range's buffered writes first; on a busy
              // machine that
              // can pass the default 10 s, and an operation that gave up meanwhile would only add
              // noise here.
              .requestTimeout(Duration.ofSeconds(30));
      if (writeBack) {
        // The drains' statements carry the range's fence token; a takeover raises it in the table.
        builder.storeFence(store);
        builder.writeBack(
            // Typed, so that the buffers' change type (DocumentChanges) is inferred from them.
            (OwnedRange range) ->
                RangeWriteBack.builder(DomainType.INTEGER)
                    // Each range's engine is its own, locking the range's documents in this
                    // process under the range's lease; the buffer closes it with the range.
                    .writeBack(
                        DocumentWriteBack.builder()
                            .replicas(1)
                            .cache(cache)
                            .store(store)
                            .ownedRange(range)
                            .drainThreads(1)
                            .drainOnClose(Duration.ZERO)
                            .build())
                    .documentAttribute(BufferedScores::id)
                    .collection(range.collection())
                    .domain(range.domain())
                    .build(),
            Map.of("change", BufferedScores.changes()));
      } else {
        builder
            // Change records: a write keeps the results it touches in its process's near cache
            // alone (a killed or paused owner leaves no copy of them in the cache servers).
            .dendrite(settings -> settings.writePolicy(policy).changeRecords(Scores.SET_RECORDS))
            .command("set", table.set())
            .command("remove", table.remove());
      }
      if (bypass) {
        builder.ownEveryRangeForTesting();
      }
      PartitionedDendrite<Integer, Scores.Score> dendrite = builder.build();
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
        List<Thread> workers = new ArrayList<>();
        for (int n = 0; n < THREADS; n++) {
          Thread worker =
              new Thread(
                  () -> {
                    while (System.nanoTime() < deadline) {
                      try {
                        if (writeBack) {
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
      System.out.println("DONE " + dendrite.metrics());
      dendrite.close();
      if (store != null) {
        store.close();
      }
      System.out.println("CLOSED");
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
