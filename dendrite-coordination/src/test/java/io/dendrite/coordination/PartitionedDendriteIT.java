package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.OwnedRange;
import io.dendrite.core.WritePolicy;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.document.DocumentWriteBack;
import java.nio.file.Path;
import java.util.List;
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
  private static final long RUN_SECONDS = Long.getLong("dendrite.consistency.seconds", 12);
  private static final long CONTROL_SECONDS = 10;

  @ParameterizedTest
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_AROUND", "WRITE_THROUGH", "WRITE_BACK"})
  void threeProcessesShareTheDomainWithoutStaleReads(
      WritePolicy policy, MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir)
      throws Exception {
    ServiceProcesses.Outcome run = run(policy, "coordinated", RUN_SECONDS, database, zk, dir);

    assertThat(run.failureKinds()).as("operations that failed").containsOnly("[]");
    assertThat(run.report().count()).as("stale reads: %s", run.report().violations()).isZero();
    // Floors that show each path ran, over the three processes together. Each process goes on past
    // the run's seconds until it did 150 steps: with four soaks on two cores a 10 s run once did 25
    // per process, checked 91 row-reads and read no hit directly (0 stale), which failed these
    // floors as throughput floors.
    assertThat(run.report().rowReadsChecked()).isGreaterThan(200);
    assertThat(run.miscounted()).as("increments lost or applied twice").isEmpty();
    for (String path : List.of("forwardedGets", "forwardedWrites", "directHits", "servedHere")) {
      assertThat(run.done().stream().mapToLong(done -> count(done, path)).sum())
          .as("%s over the processes: %s", path, run.done())
          .isPositive();
    }
  }

  @Test
  void processesThatAllBelieveTheyOwnEveryRangeReadStale(
      MySqlTestDatabase database, ZooKeeperAddress zk, @TempDir Path dir) throws Exception {
    ServiceProcesses.Outcome run =
        run(WritePolicy.WRITE_THROUGH, "bypass", CONTROL_SECONDS, database, zk, dir);

    assertThat(run.report().count()).as("stale reads with the coordinator bypassed").isPositive();
  }

  private static ServiceProcesses.Outcome run(
      WritePolicy policy,
      String mode,
      long seconds,
      MySqlTestDatabase database,
      ZooKeeperAddress zk,
      Path dir)
      throws Exception {
    try (Scores table = new Scores(database).create(PartitionedChild.ROWS);
        EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ServiceProcesses service =
            new ServiceProcesses(
                zk.connectString(),
                zk.service(),
                database,
                cacheTier.addresses(),
                policy,
                seconds,
                dir,
                mode)) {
      // About a fifth of what a process does in a run on a quiet machine: only a starved run goes
      // on.
      service.atLeastSteps(150);
      boolean bypass = mode.equals("bypass");
      // One at a time, so that the spread is settled before the run starts.
      service.start(0, PartitionedChild.RANGES);
      service.start(1, bypass ? PartitionedChild.RANGES : PartitionedChild.RANGES / 2);
      service.start(2, bypass ? PartitionedChild.RANGES : PartitionedChild.RANGES / 3);
      if (!bypass) {
        for (int n = 0; n < 3; n++) {
          ServiceProcesses.awaitServes(service.child(n), 2, java.time.Duration.ofSeconds(60));
        }
      }
      service.go();
      return service.finish(List.of(0, 1, 2), table, () -> drainLeft(cacheTier, database));
    }
  }

  /**
   * Applies whatever the processes left buffered (write-back), as the next owner of each range would: every range's
   * engine is its own, and only an engine owned by the range drains the range's pending-writes partitions.
   */
  static void drainLeft(EmbeddedIqServers cacheTier, MySqlTestDatabase database) {
    try (MySqlStore store =
        MySqlStore.open(database.jdbcUrl(), 2, java.time.Duration.ofSeconds(10))) {
      for (int range = 0; range < PartitionedChild.RANGES; range++) {
        // Above any epoch ZooKeeper gave out in the run, as a later owner's would be, and within
        // the IQ server's largest fence epoch (2^31).
        OwnedRange lastOwner = new LastOwner("scores", "id." + range, 1L << 30);
        cacheTier.client.fences().raise(lastOwner.fence(), lastOwner.epoch());
        try (DocumentWriteBack engine =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cacheTier.client)
                .store(store)
                .drainThreads(0)
                .ownedRange(lastOwner)
                .build()) {
          engine.drainNow();
        }
      }
    }
  }

  /** The owner, after the run, of a range nobody else owns any more. */
  record LastOwner(String collection, String domain, long epoch) implements OwnedRange {
    @Override
    public String fence() {
      return "Fence:" + collection + "." + domain;
    }

    @Override
    public String attribute() {
      return domain.substring(0, domain.lastIndexOf('.'));
    }

    @Override
    public boolean held() {
      return true;
    }
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
