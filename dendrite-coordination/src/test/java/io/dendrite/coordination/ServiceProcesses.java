package io.dendrite.coordination;

import io.dendrite.consistency.History;
import io.dendrite.consistency.StaleReadChecker;
import io.dendrite.core.WritePolicy;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.faults.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The application processes of one service for the multi-process tests: {@link PartitionedChild} JVMs on one
 * ZooKeeper, cache tier and table, started and stopped together, and their histories checked together with a final
 * read of the table (so a write lost by the service shows as a stale read).
 */
final class ServiceProcesses implements AutoCloseable {
  private static final Duration START = Duration.ofSeconds(90);

  private final List<ChildJvm> children = new ArrayList<>();
  private final List<String> arguments;
  private final Path dir;
  private final Path go;
  private final long seconds;
  private long minimumSteps;

  /**
   * What the processes did, checked: the stale reads, each process's metrics and kinds of failure, and the rows whose
   * count in the table is not the number of increments acknowledged (plus at most those whose outcome is unknown).
   */
  record Outcome(
      StaleReadChecker.Report report,
      List<String> done,
      List<String> failureKinds,
      List<String> failures,
      List<String> miscounted) {}

  ServiceProcesses(
      String connectString,
      String service,
      MySqlTestDatabase database,
      String cacheAddresses,
      WritePolicy policy,
      long seconds,
      Path dir,
      String mode) {
    this.dir = dir;
    this.go = dir.resolve("go");
    this.seconds = seconds;
    Path secret = dir.resolve("forwarding-secret");
    try {
      byte[] random = new byte[32];
      new java.security.SecureRandom().nextBytes(random);
      java.nio.file.Files.writeString(
          secret, java.util.Base64.getEncoder().encodeToString(random) + "\n");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    this.arguments =
        List.of(
            connectString,
            service,
            database.jdbcUrl(),
            database.name(),
            cacheAddresses,
            policy.name(),
            Long.toString(seconds),
            go.toString(),
            mode);
  }

  /**
   * Processes started after this go on past the run's seconds until each did {@code steps} reads and writes (up to
   * five times the seconds): a run's checks count what ran, and a busy machine must not leave them with too little.
   */
  ServiceProcesses atLeastSteps(long steps) {
    this.minimumSteps = steps;
    return this;
  }

  /** Starts process {@code n} and waits until it serves {@code serves} ranges (-1: until it joined). */
  ChildJvm start(int n, int serves) {
    List<String> args = new ArrayList<>(arguments);
    args.add(2, "process-" + n);
    args.add(8, dir.resolve("history-" + n).toString());
    args.add(Integer.toString(n + 1));
    args.add(dir.resolve("forwarding-secret").toString());
    args.add(Long.toString(minimumSteps));
    ChildJvm child = ChildJvm.start(PartitionedChild.class.getName(), List.of("-Xmx128m"), args);
    children.add(child);
    if (serves >= 0) {
      awaitServes(child, serves, START);
    } else {
      child.awaitLine(line -> line.startsWith("SERVES "), START);
    }
    return child;
  }

  ChildJvm child(int n) {
    return children.get(n);
  }

  /** Lets every process (and any started later) run its readers and writers. */
  void go() throws Exception {
    Files.createFile(go);
  }

  /**
   * Waits until a {@code SERVES} line of {@code child} printed after its first {@code fromLine} lines says {@code
   * serves}: it got there, even if it has moved on since (a run that ends closes the process, which then serves
   * nothing).
   */
  static void awaitServesSince(ChildJvm child, int fromLine, int serves, Duration timeout) {
    child.awaitLineAfter(fromLine, ("SERVES " + serves)::equals, timeout);
  }

  /** How many lines {@code child} printed after its first {@code fromLine} that contain {@code text}. */
  static long countSince(ChildJvm child, int fromLine, String text) {
    List<String> lines = child.lines();
    return lines.subList(Math.min(fromLine, lines.size()), lines.size()).stream()
        .filter(line -> line.contains(text))
        .count();
  }

  /** Waits until the latest {@code SERVES} line of {@code child} says {@code serves}. */
  static void awaitServes(ChildJvm child, int serves, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (lastServes(child) != serves) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "the process serves "
                + lastServes(child)
                + " ranges, not "
                + serves
                + "; output: "
                + child.lines());
      }
      sleep(20);
    }
  }

  /** The number of ranges {@code child} said it serves last, or -1. */
  static int lastServes(ChildJvm child) {
    List<String> lines = child.lines();
    for (int i = lines.size() - 1; i >= 0; i--) {
      if (lines.get(i).startsWith("SERVES ")) {
        return Integer.parseInt(lines.get(i).substring("SERVES ".length()));
      }
    }
    return -1;
  }

  /**
   * Waits for the processes in {@code running} to finish, then checks every process's history with a final read of
   * {@code table} (at the end: no acknowledged write may be missing from it).
   */
  Outcome finish(List<Integer> running, Scores table) throws Exception {
    return finish(running, table, () -> {});
  }

  /** {@link #finish(List, Scores)}, running {@code beforeFinalRead} (a drain of what is still buffered) first. */
  Outcome finish(List<Integer> running, Scores table, Runnable beforeFinalRead) throws Exception {
    List<String> done = new ArrayList<>();
    List<String> failureKinds = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (int n : running) {
      ChildJvm child = children.get(n);
      child.awaitLine(line -> line.equals("CLOSED"), Duration.ofSeconds(6 * seconds + 120));
      done.add(child.awaitLine(line -> line.startsWith("DONE "), Duration.ZERO));
      String kinds = child.awaitLine(line -> line.startsWith("FAILURE-KINDS "), Duration.ZERO);
      failureKinds.add(kinds.substring("FAILURE-KINDS ".length()));
      failures.add(child.awaitLine(line -> line.startsWith("FAILURES "), Duration.ZERO));
      child.lines().stream()
          .filter(line -> line.startsWith("FAILURE-TRACE "))
          .forEach(line -> System.out.println("process-" + n + " " + line));
    }
    List<Path> files = new ArrayList<>();
    for (int n = 0; n < children.size(); n++) {
      files.add(dir.resolve("history-" + n));
    }
    History history = HistoryFiles.read(files, PartitionedChild.ROWS);
    beforeFinalRead.run();
    long at = System.nanoTime();
    Map<Long, Long> rows = new HashMap<>();
    List<Scores.Score> finalRows = table.range(0, PartitionedChild.ROWS - 1);
    finalRows.forEach(row -> rows.put((long) row.id(), row.val()));
    history.recordRead(0, PartitionedChild.ROWS - 1, rows, at, System.nanoTime());
    Map<Integer, HistoryFiles.Increments> increments = HistoryFiles.increments(files);
    List<String> miscounted = new ArrayList<>();
    for (Scores.Score row : finalRows) {
      HistoryFiles.Increments made =
          increments.getOrDefault(row.id(), new HistoryFiles.Increments(0, 0));
      if (row.cnt() < made.acknowledged() || row.cnt() > made.acknowledged() + made.unknown()) {
        miscounted.add("row " + row.id() + " counts " + row.cnt() + " after " + made);
      }
    }
    StaleReadChecker.Report report = StaleReadChecker.check(history);
    if (report.count() > 0 && System.getProperty("dendrite.keephistories") != null) {
      Path kept =
          Files.createDirectories(
              Path.of(System.getProperty("dendrite.keephistories"), "run-" + System.nanoTime()));
      for (Path file : files) {
        if (Files.exists(file)) {
          Files.copy(file, kept.resolve(file.getFileName()));
        }
      }
      for (int n = 0; n < children.size(); n++) {
        Files.write(kept.resolve("output-" + n), children.get(n).lines());
      }
      Files.writeString(kept.resolve("violations"), report.violations().toString());
    }
    System.out.printf(
        "%d row-reads checked, %d stale; %d increments, %d miscounted rows; %s; failures %s%n",
        report.rowReadsChecked(),
        report.count(),
        increments.values().stream().mapToLong(HistoryFiles.Increments::acknowledged).sum(),
        miscounted.size(),
        done,
        failureKinds);
    return new Outcome(report, done, failureKinds, failures, miscounted);
  }

  @Override
  public void close() {
    children.forEach(ChildJvm::close);
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
