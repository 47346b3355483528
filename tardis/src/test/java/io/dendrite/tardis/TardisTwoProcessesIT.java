package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.ChildJvm;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Two application processes (child JVMs) increment and read overlapping documents through TARDIS on one cache tier
 * and one MariaDB, with different views of the database: A reaches it through a proxy that is cut, so A is in failed
 * mode and buffers its writes, while B, connected directly, stays in normal mode and meets A's buffered documents
 * (it applies them first). Once the proxy relays again A enters recovery and is SIGKILLed there; B finishes what is
 * buffered. Every increment either process acknowledged must be in the database once; none may be read missing by
 * the process that made it.
 */
@ExtendWith(RealServers.class)
class TardisTwoProcessesIT {
  private static final int DOCUMENTS = 300;

  @ParameterizedTest
  @EnumSource(Solution.class)
  void aProcessKilledDuringRecoveryLosesNothingAndTheOtherFinishes(
      Solution solution, MySqlTestDatabase database) throws Exception {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
      try (PreparedStatement insert =
          connection.prepareStatement("INSERT INTO users VALUES (?, ?, 0)")) {
        for (int id = 0; id < DOCUMENTS; id++) {
          insert.setInt(1, id);
          insert.setString(2, "u" + id);
          insert.addBatch();
        }
        insert.executeBatch();
      }
    }
    String url = database.jdbcUrl();
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder()
                .count(2)
                .pinnedMemoryBytes(64L << 20)
                .leaseLifetime(Duration.ofSeconds(2))
                .start();
        CuttableProxy proxy = CuttableProxy.inFrontOf(url);
        // A: documents 0..199 through the proxy; B: 100..299 directly. Both overlap on 100..199.
        // Neither has recovery workers at first, so that A's buffered writes outlast the outage; B
        // starts some 20 s in, after A was killed, and applies what A left.
        // A's short store timeout finds the outage at once; B's database is never cut, and its
        // longer one keeps a busy machine's slow pool from looking like an outage to B.
        ChildJvm a =
            child(proxy.routed(url), 1_000, cache.addresses(), 0, 200, 40, 1_000, solution);
        ChildJvm b = child(url, 5_000, cache.addresses(), 100, 200, 30, 20, solution);
        MySqlStore direct = MySqlStore.open(url, 2, Duration.ofSeconds(10))) {
      a.awaitLine(line -> line.startsWith("started"), Duration.ofSeconds(60));
      b.awaitLine(line -> line.startsWith("started"), Duration.ofSeconds(60));
      Thread.sleep(3_000);

      proxy.cut();
      int failedAt = failedSinceTheCut(a);
      Thread.sleep(8_000);
      proxy.restore();
      int recoveryAt = a.awaitLineAfter(failedAt, "mode RECOVERY"::equals, Duration.ofSeconds(30));
      a.kill();

      String end =
          b.awaitLine(
              line -> line.equals("recovered") || line.startsWith("backlog"),
              Duration.ofSeconds(180));
      assertThat(end)
          .as("the surviving process applied everything buffered")
          .isEqualTo("recovered");

      List<String> aLines = a.lines();
      List<String> bLines = b.lines();
      String bStats =
          bLines.stream().filter(line -> line.startsWith("absorbed ")).findFirst().orElseThrow();
      assertThat(Long.parseLong(bStats.split(" ")[3]))
          .as("B, in normal mode, applied buffered writes it met before its own (%s)", bStats)
          .isPositive();
      long acknowledgedWhileFailed =
          aLines.subList(failedAt, recoveryAt).stream().filter(l -> l.startsWith("ack ")).count();
      assertThat(acknowledgedWhileFailed)
          .as(
              "A's writes acknowledged while it was failed (lines %d..%d; A's modes and failures: %s)",
              failedAt, recoveryAt, modesAndFailures(aLines))
          .isPositive();

      long[] acknowledged = new long[DOCUMENTS];
      long[] unknown = new long[DOCUMENTS];
      List<String> stale = new ArrayList<>();
      for (List<String> lines : List.of(aLines, bLines)) {
        for (String line : lines) {
          String[] parts = line.split(" ");
          if (parts[0].equals("intent")) {
            unknown[Integer.parseInt(parts[1])]++;
          } else if (parts[0].equals("ack")) {
            int id = Integer.parseInt(parts[1]);
            unknown[id]--;
            acknowledged[id]++;
          } else if (parts[0].equals("stale")) {
            stale.add(line);
          }
        }
      }
      List<String> mismatches = new ArrayList<>();
      for (int id = 0; id < DOCUMENTS; id++) {
        long score =
            ((Number)
                    direct
                        .read(new EntityKey("users", id))
                        .map(Entity::fields)
                        .orElseThrow()
                        .get("score"))
                .longValue();
        if (score < acknowledged[id] || score > acknowledged[id] + unknown[id]) {
          mismatches.add(
              id + ": " + score + ", acknowledged " + acknowledged[id] + " (+" + unknown[id] + ")");
        }
      }
      assertThat(mismatches).as("documents that lost or doubled an increment").isEmpty();
      assertThat(stale).as("reads missing the process's own acknowledged increments").isEmpty();
    }
  }

  /**
   * The index of A's line saying it entered the failed mode it is in through the cut. On a busy machine A can
   * flap into failed mode and out again before the cut (a pooled connection that took longer than its 1 s store
   * timeout is a failed operation), so the first such line need not be the cut's; and if A was failed already
   * when the cut came, its last mode line is the one.
   */
  private static int failedSinceTheCut(ChildJvm a) {
    List<String> atCut = a.lines();
    for (int i = atCut.size() - 1; i >= 0; i--) {
      if (atCut.get(i).startsWith("mode ")) {
        if (atCut.get(i).equals("mode FAILED")) {
          return i;
        }
        break;
      }
    }
    return a.awaitLineAfter(atCut.size(), "mode FAILED"::equals, Duration.ofSeconds(30));
  }

  /** Each mode line with its index, and how many operations failed with each exception. */
  private static String modesAndFailures(List<String> lines) {
    List<String> modes = new ArrayList<>();
    Map<String, Integer> failures = new TreeMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.startsWith("mode ")) {
        modes.add(i + ": " + line);
      } else if (line.startsWith("failed ")) {
        failures.merge(line.substring(line.lastIndexOf(' ') + 1), 1, Integer::sum);
      }
    }
    return modes + " " + failures;
  }

  private static ChildJvm child(
      String url,
      int storeTimeoutMillis,
      String cache,
      int first,
      int count,
      int seconds,
      int workersAfterSeconds,
      Solution solution) {
    return ChildJvm.start(
        TardisChild.class.getName(),
        List.of("-Xmx256m"),
        List.of(
            url,
            String.valueOf(storeTimeoutMillis),
            cache,
            String.valueOf(first),
            String.valueOf(count),
            String.valueOf(seconds),
            "2",
            String.valueOf(workersAfterSeconds),
            solution.name()));
  }
}
