package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.consistency.History;
import io.dendrite.consistency.StaleReadChecker;
import io.dendrite.core.WritePolicy;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.ChildJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Three application processes (child JVMs), each with its own {@link PartitionedDendrite} on one ZooKeeper, one IQ
 * cache tier and one MariaDB table, each running readers and writers over the whole domain; the checker then reads
 * every process's history together. Coordinated, no read is stale, and misses and writes are forwarded between the
 * processes; with every process believing it owns every range (the negative control), the checker finds stale
 * reads.
 */
@ExtendWith(RealServers.class)
class PartitionedDendriteIT {
  private static final int PROCESSES = 3;
  private static final long RUN_SECONDS = Long.getLong("dendrite.consistency.seconds", 20);
  private static final long CONTROL_SECONDS = 10;

  @ParameterizedTest
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_AROUND", "WRITE_THROUGH"})
  void threeProcessesShareTheDomainWithoutStaleReads(
      WritePolicy policy, MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir)
      throws Exception {
    Run run = run(policy, "coordinated", RUN_SECONDS, database, zk, dir);

    assertThat(run.failures).as("operations that failed").isEmpty();
    assertThat(run.report.count()).as("stale reads: %s", run.report.violations()).isZero();
    assertThat(run.report.rowReadsChecked()).isGreaterThan(1_000);
    for (String done : run.done) {
      assertThat(count(done, "forwardedGets")).as("misses forwarded: %s", done).isPositive();
      assertThat(count(done, "forwardedWrites")).as("writes forwarded: %s", done).isPositive();
      assertThat(count(done, "directHits")).as("hits read directly: %s", done).isPositive();
      assertThat(count(done, "servedHere")).as("served as owner: %s", done).isPositive();
    }
  }

  @Test
  void processesThatAllBelieveTheyOwnEveryRangeReadStale(
      MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir) throws Exception {
    Run run = run(WritePolicy.WRITE_THROUGH, "bypass", CONTROL_SECONDS, database, zk, dir);

    assertThat(run.report.count()).as("stale reads with the coordinator bypassed").isPositive();
  }

  private record Run(StaleReadChecker.Report report, List<String> done, List<String> failures) {}

  private static Run run(
      WritePolicy policy,
      String mode,
      long seconds,
      MySqlTestDatabase database,
      ZooKeeperAddress zk,
      Path dir)
      throws Exception {
    Path go = dir.resolve("go");
    List<ChildJvm> children = new ArrayList<>();
    try (Scores table = new Scores(database).create(PartitionedChild.ROWS);
        EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2)) {
      for (int process = 0; process < PROCESSES; process++) {
        children.add(
            ChildJvm.start(
                PartitionedChild.class.getName(),
                List.of("-Xmx128m"),
                List.of(
                    zk.connectString(),
                    zk.service(),
                    "process-" + process,
                    database.jdbcUrl(),
                    database.name(),
                    cacheTier.addresses(),
                    policy.name(),
                    Long.toString(seconds),
                    dir.resolve("history-" + process).toString(),
                    go.toString(),
                    mode,
                    Integer.toString(process + 1))));
        // One at a time, so that the spread is settled before the run starts.
        int serves =
            mode.equals("bypass")
                ? PartitionedChild.RANGES
                : PartitionedChild.RANGES / (process + 1);
        children
            .get(process)
            .awaitLine(line -> line.equals("SERVES " + serves), Duration.ofSeconds(90));
      }
      if (mode.equals("coordinated")) {
        for (ChildJvm child : children) {
          child.awaitLine(line -> line.equals("SERVES 2"), Duration.ofSeconds(60));
        }
      }
      Files.createFile(go);
      List<String> done = new ArrayList<>();
      List<String> failures = new ArrayList<>();
      for (ChildJvm child : children) {
        child.awaitLine(line -> line.equals("CLOSED"), Duration.ofSeconds(seconds + 120));
        done.add(child.awaitLine(line -> line.startsWith("DONE "), Duration.ZERO));
        String failed = child.awaitLine(line -> line.startsWith("FAILURES "), Duration.ZERO);
        if (!failed.startsWith("FAILURES 0 ")) {
          failures.add(failed);
        }
      }
      History history = history(dir);
      StaleReadChecker.Report report = StaleReadChecker.check(history);
      System.out.printf(
          "%s %s: %d row-reads checked, %d stale; %s%n",
          policy, mode, report.rowReadsChecked(), report.count(), done);
      return new Run(report, done, failures);
    } finally {
      children.forEach(ChildJvm::close);
    }
  }

  /** Every process's history file read into one history. */
  private static History history(Path dir) throws IOException {
    Map<Long, Object> initial = new HashMap<>();
    for (long id = 0; id < PartitionedChild.ROWS; id++) {
      initial.put(id, 0L);
    }
    History history = new History(initial);
    for (int process = 0; process < PROCESSES; process++) {
      for (String line : Files.readAllLines(dir.resolve("history-" + process))) {
        String[] field = line.split(" ", -1);
        if (field[0].equals("W")) {
          history.recordWrite(
              Long.parseLong(field[1]),
              field[2].equals("-") ? null : Long.valueOf(field[2]),
              Long.parseLong(field[3]),
              Long.parseLong(field[4]));
        } else {
          Map<Long, Long> returned = new HashMap<>();
          if (field.length > 5 && !field[5].isEmpty()) {
            for (String row : field[5].split(",")) {
              int colon = row.indexOf(':');
              returned.put(
                  Long.parseLong(row.substring(0, colon)),
                  Long.parseLong(row.substring(colon + 1)));
            }
          }
          history.recordRead(
              Long.parseLong(field[1]),
              Long.parseLong(field[2]),
              returned,
              Long.parseLong(field[3]),
              Long.parseLong(field[4]));
        }
      }
    }
    return history;
  }

  /** A count from a {@code DONE Metrics[servedHere=.., ...]} line. */
  private static long count(String done, String name) {
    int at = done.indexOf(name + "=");
    int from = at + name.length() + 1;
    int to = from;
    while (to < done.length() && Character.isDigit(done.charAt(to))) {
      to++;
    }
    return Long.parseLong(done.substring(from, to));
  }
}
