package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.DendriteBusyException;
import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import io.dendrite.core.OutageTolerance;
import io.dendrite.core.OutcomeUnknownException;
import io.dendrite.core.OwnedRange;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.iq.client.IqException;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.tardis.Tardis;
import io.dendrite.tardis.TardisRanges;
import io.dendrite.tardis.TardisUnavailableException;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.ChildJvm;
import io.dendrite.writeback.change.DocumentChanges;
import java.nio.file.Files;
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
      awaitTheSurvivorsTakeTwoRanges(service, linesBefore);
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
      assertFailedOnlyWith(
          outcome, OutcomeUnknownException.class, DendriteBusyException.class, IqException.class);
    }
  }

  /**
   * TARDIS over many processes: the data store goes down for every process, their writes are teleported into the
   * cache tier (each range's into its own partitions and index), an owner is killed while its ranges hold teleported
   * writes, and the data store comes back. The survivors take its ranges over and apply what it teleported (their
   * misses first, their recovery workers the rest) with their own fence tokens: no read is stale and no increment is
   * lost or applied twice.
   */
  @Test
  void aKilledOwnersTeleportedWritesAreRecoveredByTheNewOwnersUnderTardis(
      MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir) throws Exception {
    TardisRun run = killAnOwnerMidOutage("tardis", database, zk, dir);
    assertThat(run.outcome.report().count())
        .as("stale: %s", run.outcome.report().violations())
        .isZero();
    assertThat(run.outcome.miscounted()).as("increments lost or applied twice").isEmpty();
    // The outage was felt: writes were teleported, and the survivors recovered teleported writes
    // (their own and the killed owner's) into the table.
    assertThat(run.teleported).as("writes teleported by the survivors").isPositive();
    assertThat(run.recovered).as("teleported writes recovered").isPositive();
    // Besides what the write-through run may fail with: reads and writes TARDIS refused while the
    // data store was down (TardisUnavailableException at the owner, a
    // DataStoreUnavailableException where a process that forwarded a read is told of it).
    assertFailedOnlyWith(
        run.outcome,
        OutcomeUnknownException.class,
        DendriteBusyException.class,
        IqException.class,
        TardisUnavailableException.class,
        DataStoreUnavailableException.class);
  }

  /**
   * The negative control of {@link #aKilledOwnersTeleportedWritesAreRecoveredByTheNewOwnersUnderTardis}: with each
   * range's index of teleported writes ignored, a new owner's misses query a table that lacks the killed owner's
   * teleported writes, and the checker sees the stale reads that caches.
   */
  @Test
  void withoutTheIndexOfTeleportedWritesTheNewOwnersReadStale(
      MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir) throws Exception {
    TardisRun run = killAnOwnerMidOutage("tardis-unindexed", database, zk, dir);
    assertThat(run.teleported).as("writes teleported by the survivors").isPositive();
    assertThat(run.outcome.report().count()).as("stale reads").isPositive();
  }

  private record TardisRun(ServiceProcesses.Outcome outcome, long teleported, long recovered) {}

  private static TardisRun killAnOwnerMidOutage(
      String mode, MySqlTestDatabase database, ZooKeeperAddress zk, Path dir) throws Exception {
    try (Scores table = new Scores(database).create(PartitionedChild.ROWS);
        EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ServiceProcesses service =
            service(
                zk.connectString(),
                zk.service(),
                database,
                cacheTier,
                dir,
                WritePolicy.WRITE_THROUGH,
                RUN_SECONDS,
                mode)) {
      startThree(service);
      service.go();
      ServiceProcesses.sleep(4_000);

      Path outage = dir.resolve("outage");
      Files.createFile(outage);
      ServiceProcesses.sleep(3_000);
      int[] linesBefore = {service.child(1).lines().size(), service.child(2).lines().size()};
      service.child(0).kill();
      ServiceProcesses.sleep(2_000);
      Files.delete(outage);

      awaitTheSurvivorsTakeTwoRanges(service, linesBefore);

      ServiceProcesses.Outcome outcome =
          service.finish(List.of(1, 2), table, () -> recoverTeleported(cacheTier, database));
      long[] counts = new long[2];
      for (int n = 1; n <= 2; n++) {
        service.child(n).lines().stream()
            .filter(line -> line.contains("TARDIS absorbed "))
            .map(line -> line.substring(line.indexOf("TARDIS absorbed ")).split(" "))
            .forEach(
                words -> {
                  counts[0] += Long.parseLong(words[2]);
                  counts[1] += Long.parseLong(words[4]);
                });
      }
      System.out.printf(
          "TARDIS (%s): the survivors teleported %d writes and recovered %d%n",
          mode, counts[0], counts[1]);
      return new TardisRun(outcome, counts[0], counts[1]);
    }
  }

  /**
   * What the processes left teleported when they closed, applied by a last owner of each range (above every epoch of
   * the run), as a later owner's misses would: before the table's final read.
   */
  private static void recoverTeleported(EmbeddedIqServers cacheTier, MySqlTestDatabase database) {
    try (MySqlStore store = MySqlStore.open(database.jdbcUrl(), 2, Duration.ofSeconds(10))) {
      for (int range = 0; range < PartitionedChild.RANGES; range++) {
        OwnedRange lastOwner =
            new PartitionedDendriteIT.LastOwner("scores", "id." + range, 1L << 30);
        cacheTier.client.fences().raise(lastOwner.fence(), lastOwner.epoch());
        OutageTolerance<DocumentChanges> tardis =
            TardisRanges.of(
                Tardis.builder()
                    .cache(cacheTier.client)
                    .store(store)
                    .replicas(1)
                    .partitions(8)
                    .drainThreads(0));
        try (FenceScope fenced =
                cacheTier.client.fences().guard(lastOwner.fence(), lastOwner.epoch());
            OutageTolerance.RangeGuard<Integer, DocumentChanges> guard =
                tardis.open(DomainType.INTEGER, lastOwner, cacheTier.client)) {
          guard.miss(Interval.of(0, PartitionedChild.ROWS - 1), () -> null);
        } catch (Exception e) {
          throw new IllegalStateException("recovering range " + range + " after the run", e);
        }
      }
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
    return service(
        connectString, name, database, cacheTier, dir, policy, runSeconds, "coordinated");
  }

  /** {@code mode}: as {@link PartitionedChild} takes it ({@code coordinated}, {@code tardis}, ...). */
  private static ServiceProcesses service(
      String connectString,
      String name,
      MySqlTestDatabase database,
      EmbeddedIqServers cacheTier,
      Path dir,
      WritePolicy policy,
      long runSeconds,
      String mode) {
    return new ServiceProcesses(
        connectString, name, database, cacheTier.addresses(), policy, runSeconds, dir, mode);
  }

  /**
   * Waits until ZooKeeper gave the survivors (processes 1 and 2) the killed process's two ranges ("owns" lines
   * printed after {@code linesBefore}); serving them comes after the rebuild, and under write-back after the range's
   * buffered writes are applied, which on a busy machine can outlast the run.
   */
  private static void awaitTheSurvivorsTakeTwoRanges(ServiceProcesses service, int[] linesBefore) {
    long deadline = System.nanoTime() + MOVE.toNanos();
    while (taken(service, linesBefore) < 2 && System.nanoTime() < deadline) {
      ServiceProcesses.sleep(20);
    }
    assertThat(taken(service, linesBefore))
        .as("ranges the survivors took")
        .isGreaterThanOrEqualTo(2);
  }

  private static long taken(ServiceProcesses service, int[] linesBefore) {
    return ServiceProcesses.countSince(service.child(1), linesBefore[0], ": owns scores.")
        + ServiceProcesses.countSince(service.child(2), linesBefore[1], ": owns scores.");
  }

  /** Every process's operations failed, if at all, only with exceptions of the {@code allowed} kinds. */
  private static void assertFailedOnlyWith(ServiceProcesses.Outcome outcome, Class<?>... allowed) {
    assertThat(outcome.failureKinds())
        .as("failures: %s", outcome.failures())
        .allMatch(
            kinds -> {
              String left = kinds;
              for (Class<?> kind : allowed) {
                left = left.replace(kind.getName(), "");
              }
              return left.replaceAll("[\\[\\], ]", "").isEmpty();
            });
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
