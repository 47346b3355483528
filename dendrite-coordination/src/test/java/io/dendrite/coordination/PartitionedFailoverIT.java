package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.DendriteBusyException;
import io.dendrite.core.OutcomeUnknownException;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqException;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Ownership moving under load between application processes (child JVMs running readers and writers over the whole
 * domain, write-through): an owner killed, an owner paused past its session and resumed, a process joining, and
 * ZooKeeper restarting. In each, no read is stale — the final read of the table included, so no acknowledged write
 * is lost — and the ranges end up owned again.
 */
@ExtendWith(RealServers.class)
class PartitionedFailoverIT {
  private static final long RUN_SECONDS = 16;
  private static final Duration MOVE = Duration.ofSeconds(60);

  @ParameterizedTest
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_THROUGH", "WRITE_BACK"})
  void aKilledOwnersRangesMoveAndNoReadIsStaleNorWriteLost(
      WritePolicy policy, MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir)
      throws Exception {
    try (Scores table = new Scores(database).create(PartitionedChild.ROWS);
        EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ServiceProcesses service =
            service(
                zk.connectString(), zk.service(), database, cacheTier, dir, policy, RUN_SECONDS)) {
      startThree(service);
      service.go();
      ServiceProcesses.sleep(6_000);

      int[] linesBefore = {service.child(1).lines().size(), service.child(2).lines().size()};
      long killedAt = System.nanoTime();
      service.child(0).kill();
      // The survivors take the dead owner's two ranges (ZooKeeper says so: "owns"); serving them
      // comes after
      // the rebuild, and under write-back after the range's buffered writes are applied, which on a
      // busy
      // machine can outlast the run.
      long deadline = System.nanoTime() + MOVE.toNanos();
      while (ServiceProcesses.countSince(service.child(1), linesBefore[0], ": owns scores.")
                  + ServiceProcesses.countSince(service.child(2), linesBefore[1], ": owns scores.")
              < 2
          && System.nanoTime() < deadline) {
        ServiceProcesses.sleep(20);
      }
      assertThat(
              ServiceProcesses.countSince(service.child(1), linesBefore[0], ": owns scores.")
                  + ServiceProcesses.countSince(service.child(2), linesBefore[1], ": owns scores."))
          .as("ranges the survivors took")
          .isGreaterThanOrEqualTo(2);
      System.out.printf(
          "the killed owner's ranges moved in %d ms%n", (System.nanoTime() - killedAt) / 1_000_000);

      ServiceProcesses.Outcome outcome =
          service.finish(
              List.of(1, 2), table, () -> PartitionedDendriteIT.drainLeft(cacheTier, database));
      assertThat(outcome.report().count()).as("stale: %s", outcome.report().violations()).isZero();
      assertThat(outcome.miscounted()).as("increments lost or applied twice").isEmpty();
      // A write forwarded to the owner as it died may or may not have run; an operation may give up
      // while the ranges move, or while what the dead owner held in the cache (Q leases, document
      // locks) waits to lapse (nothing applied, the caller told). Nothing else may fail.
      assertThat(outcome.failureKinds())
          .as("failures: %s", outcome.failures())
          .allMatch(
              kinds ->
                  kinds
                      .replace(OutcomeUnknownException.class.getName(), "")
                      .replace(DendriteBusyException.class.getName(), "")
                      .replace(IqException.class.getName(), "")
                      .replaceAll("[\\[\\], ]", "")
                      .isEmpty());
    }
  }

  @Test
  void aPausedOwnerChangesNothingAfterItResumesAndNoReadIsStale(
      MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir) throws Exception {
    try (Scores table = new Scores(database).create(PartitionedChild.ROWS);
        EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ServiceProcesses service =
            service(zk.connectString(), zk.service(), database, cacheTier, dir)) {
      startThree(service);
      service.go();
      ServiceProcesses.sleep(6_000);

      ChildJvm paused = service.child(0);
      int[] linesBefore = {service.child(1).lines().size(), service.child(2).lines().size()};
      paused.pause();
      ServiceProcesses.awaitServesSince(service.child(1), linesBefore[0], 3, MOVE);
      ServiceProcesses.awaitServesSince(service.child(2), linesBefore[1], 3, MOVE);
      ServiceProcesses.sleep(1_000);
      int pausedLines = paused.lines().size();
      paused.resume();
      // It rejoins under a new session and gets a share back.
      ServiceProcesses.awaitServesSince(paused, pausedLines, 2, MOVE);

      ServiceProcesses.Outcome outcome = service.finish(List.of(0, 1, 2), table);
      assertThat(outcome.report().count()).as("stale: %s", outcome.report().violations()).isZero();
    }
  }

  @Test
  void aJoiningProcessGetsItsShareAndNoReadIsStale(
      MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir) throws Exception {
    try (Scores table = new Scores(database).create(PartitionedChild.ROWS);
        EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ServiceProcesses service =
            service(zk.connectString(), zk.service(), database, cacheTier, dir)) {
      service.start(0, PartitionedChild.RANGES);
      service.start(1, PartitionedChild.RANGES / 2);
      ServiceProcesses.awaitServes(service.child(0), 3, MOVE);
      service.go();
      ServiceProcesses.sleep(5_000);

      int[] linesBefore = {service.child(0).lines().size(), service.child(1).lines().size()};
      service.start(2, -1);
      ServiceProcesses.awaitServesSince(service.child(0), linesBefore[0], 2, MOVE);
      ServiceProcesses.awaitServesSince(service.child(1), linesBefore[1], 2, MOVE);
      ServiceProcesses.awaitServesSince(service.child(2), 0, 2, MOVE);

      ServiceProcesses.Outcome outcome = service.finish(List.of(0, 1, 2), table);
      assertThat(outcome.report().count()).as("stale: %s", outcome.report().violations()).isZero();
      assertThat(outcome.failureKinds()).containsOnly("[]");
    }
  }

  /**
   * ZooKeeper (an embedded server, so that stopping it disturbs no other test) stops for longer than a session:
   * owners stop serving within their session, operations wait for an owner (some give up), and once ZooKeeper is
   * back every range is owned and served again. Once in {@code dev/test}; {@code dev/soak
   * -Ddendrite.zookeeper.restarts=4 PartitionedFailoverIT} restarts it four times in one run (a stale read this
   * caught showed about once in twenty restarts).
   */
  @Test
  void zooKeeperRestartingMidRunLeavesNoStaleReadAndTheRangesServedAgain(
      MySqlTestDatabase database, @TempDir Path dir) throws Exception {
    int restarts = Integer.getInteger("dendrite.zookeeper.restarts", 1);
    try (TestingServer zooKeeper = new TestingServer(true);
        Scores table = new Scores(database).create(PartitionedChild.ROWS);
        EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ServiceProcesses service =
            service(
                zooKeeper.getConnectString(),
                "restart",
                database,
                cacheTier,
                dir,
                WritePolicy.WRITE_THROUGH,
                RUN_SECONDS + 15L * (restarts - 1))) {
      startThree(service);
      service.go();
      ServiceProcesses.sleep(5_000);

      for (int restart = 0; restart < restarts; restart++) {
        if (restart > 0) {
          ServiceProcesses.sleep(3_000);
        }
        zooKeeper.stop();
        ServiceProcesses.sleep(6_000);
        int[] linesBefore = new int[3];
        for (int n = 0; n < 3; n++) {
          linesBefore[n] = service.child(n).lines().size();
        }
        zooKeeper.restart();
        // Every process gets its share back (it may be served already when the lines are taken:
        // the sessions outlive a stop this short, and the processes stopped serving only while
        // suspended).
        for (int n = 0; n < 3; n++) {
          if (ServiceProcesses.lastServes(service.child(n)) != 2) {
            ServiceProcesses.awaitServesSince(service.child(n), linesBefore[n], 2, MOVE);
          }
        }
      }

      ServiceProcesses.Outcome outcome = service.finish(List.of(0, 1, 2), table);
      assertThat(outcome.report().count()).as("stale: %s", outcome.report().violations()).isZero();
    }
  }

  private static ServiceProcesses service(
      String connectString,
      String name,
      MySqlTestDatabase database,
      EmbeddedIqServers cacheTier,
      Path dir) {
    return service(
        connectString, name, database, cacheTier, dir, WritePolicy.WRITE_THROUGH, RUN_SECONDS);
  }

  private static ServiceProcesses service(
      String connectString,
      String name,
      MySqlTestDatabase database,
      EmbeddedIqServers cacheTier,
      Path dir,
      WritePolicy policy,
      long runSeconds) {
    return new ServiceProcesses(
        connectString,
        name,
        database,
        cacheTier.addresses(),
        policy,
        runSeconds,
        dir,
        "coordinated");
  }

  private static void startThree(ServiceProcesses service) {
    service.start(0, PartitionedChild.RANGES);
    service.start(1, PartitionedChild.RANGES / 2);
    service.start(2, PartitionedChild.RANGES / 3);
    for (int n = 0; n < 3; n++) {
      ServiceProcesses.awaitServes(service.child(n), 2, MOVE);
    }
  }
}
