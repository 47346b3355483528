package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.RangeCache;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.WriteBack;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One builder, two deployments: the same settings and the same call sites serve a Dendrite of one process and one of
 * a service's processes ({@link ManyProcesses}); only {@link Dendrite.Builder#deployment} differs. Real ZooKeeper and
 * IQ servers, an in-memory table (MariaDB for write-back).
 */
@ExtendWith(RealServers.class)
class DeploymentsIT {

  @Test
  void theSameCallSitesServeOneProcessAndManyProcesses(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2)) {
      try (Dendrite<Integer, Scores.Score> alone = scores(cacheTier, table).build()) {
        assertThat(alone).isInstanceOf(RangeCache.class);
        readWriteRead(alone, 5);
      }
      try (Dendrite<Integer, Scores.Score> service =
          scores(cacheTier, table)
              .deployment(
                  ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                      .ranges(3)
                      .sessionTimeout(Duration.ofSeconds(3))
                      .forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback()))
              .build()) {
        PartitionedDendrite<Integer, Scores.Score> partitioned =
            (PartitionedDendrite<Integer, Scores.Score>) service;
        assertThat(partitioned.awaitSettled(1, Duration.ofSeconds(30))).isTrue();
        assertThat(partitioned.ranges()).hasSize(3);
        readWriteRead(service, 25);
        assertThat(partitioned.metrics().servedHere()).isPositive();
      }
    }
  }

  /**
   * Write-back is one builder setting for every deployment: the same {@code WriteBack} opens one buffer for a Dendrite
   * of one process, and one per range for a Dendrite over {@link ManyProcesses}, and the Dendrite closes them. MariaDB
   * holds the table; no drain thread runs, so a write stays buffered until a miss applies it.
   */
  @Test
  void writeBackIsOneSettingForEveryDeployment(MySqlTestDatabase database, ZooKeeperAddress zk)
      throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        Scores table = new Scores(database).create(60);
        MySqlStore store = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10))) {
      WriteBack writeBack = WriteBack.to(store).engine(engine -> engine.drainThreads(0));
      try (Dendrite<Integer, Scores.Score> alone =
          bufferedScores(cacheTier, table, writeBack).build()) {
        assertThat(writeBack.metrics()).as("one buffer, one engine").hasSize(1);
        bufferedWriteThenRead(alone, table, 5);
      }
      assertThat(writeBack.metrics()).as("closed with the Dendrite").isEmpty();
      try (Dendrite<Integer, Scores.Score> service =
          bufferedScores(cacheTier, table, writeBack)
              .deployment(
                  ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                      .ranges(3)
                      .sessionTimeout(Duration.ofSeconds(3))
                      .forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback())
                      .storeFence(store))
              .build()) {
        assertThat(((PartitionedDendrite<?, ?>) service).awaitSettled(1, Duration.ofSeconds(30)))
            .isTrue();
        assertThat(writeBack.metrics()).as("a buffer and an engine per range").hasSize(3);
        bufferedWriteThenRead(service, table, 25);
      }
      assertThat(writeBack.metrics()).as("closed with their ranges").isEmpty();
    }
  }

  /** A write-back Dendrite over MariaDB's scores, writing {@link BufferedScores}' changes. */
  private static Dendrite.Builder<Integer, Scores.Score> bufferedScores(
      EmbeddedIqServers cacheTier, Scores table, WriteBack writeBack) {
    return Dendrite.builder(DomainType.INTEGER, Scores.CODEC)
        .collection("scores")
        .domain("id")
        .range(0, 59)
        .cache(cacheTier.client)
        .writeBack(writeBack)
        .query("range", table::range)
        .command("change", BufferedScores.changes());
  }

  /** A write that stays buffered, then a miss that applies it before it queries MariaDB. */
  private static void bufferedWriteThenRead(
      Dendrite<Integer, Scores.Score> scores, Scores table, int id) throws Exception {
    scores.write("change", id, id, BufferedScores.set(id, 7));
    assertThat(table.range(id, id)).as("buffered only").containsExactly(new Scores.Score(id, 0, 0));
    assertThat(scores.get("range", id - 2, id + 2)).contains(new Scores.Score(id, 7, 0));
    assertThat(table.range(id, id))
        .as("applied by the miss")
        .containsExactly(new Scores.Score(id, 7, 0));
  }

  @Test
  void ownershipChangesReachTheListenerAndTheMeters(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    List<String> events = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2)) {
      Dendrite<Integer, Scores.Score> service =
          scores(cacheTier, table)
              .deployment(
                  ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                      .ranges(2)
                      .sessionTimeout(Duration.ofSeconds(3))
                      .forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback())
                      .ownershipListener(
                          new OwnershipListener() {
                            @Override
                            public void gained(String range, long epoch) {
                              throw new AssertionError("the three-argument form is called");
                            }

                            @Override
                            public void gained(String range, long epoch, boolean handedOver) {
                              events.add("gained " + range + (handedOver ? " handed over" : ""));
                              throw new IllegalStateException("a listener bug changes nothing");
                            }

                            @Override
                            public void lost(String range, long epoch) {
                              events.add("lost " + range);
                            }
                          }))
              .build();
      PartitionedDendrite<Integer, Scores.Score> partitioned =
          (PartitionedDendrite<Integer, Scores.Score>) service;
      PartitionedMeters.of(partitioned).bindTo(registry);
      assertThat(partitioned.awaitSettled(1, Duration.ofSeconds(30))).isTrue();
      readWriteRead(service, 40);

      assertThat(events).containsExactlyInAnyOrder("gained scores.id.0", "gained scores.id.1");
      assertThat(registry.get("dendrite.ranges.owned").gauge().value()).isEqualTo(2);
      assertThat(
              registry
                  .get("dendrite.ranges.gained")
                  .tag("handover", "taken-over")
                  .functionCounter()
                  .count())
          .isEqualTo(2);
      service.close();
      assertThat(events).contains("lost scores.id.0", "lost scores.id.1");
      assertThat(registry.get("dendrite.ranges.lost").functionCounter().count()).isEqualTo(2);
      assertThat(registry.get("dendrite.ranges.owned").gauge().value()).isZero();
    }
  }

  @Test
  void manyProcessesRefuseWhatTheyCannotSplitOrBuffer(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    ManyProcesses processes =
        ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
            .forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback());
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2)) {
      Dendrite.Builder<Integer, Scores.Score> withoutADomain =
          Dendrite.builder(DomainType.INTEGER, Scores.CODEC)
              .collection("scores")
              .domain("id")
              .cache(cacheTier.client)
              .deployment(processes);
      assertThatThrownBy(withoutADomain::build)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("range(min, max) is required with ManyProcesses");
      assertThatThrownBy(() -> ManyProcesses.overZooKeeper("zk:2181", "s").ranges(0))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("ranges must be at least 1, got 0");
    }
    assertThat(table).isEmpty();
  }

  /** Settings every deployment shares: the domain, the cache, the policy, a query and a command, by name. */
  private static Dendrite.Builder<Integer, Scores.Score> scores(
      EmbeddedIqServers cacheTier, Map<Integer, Scores.Score> table) {
    return InMemoryScores.dendrite(cacheTier.client, table, 59);
  }

  /** A read that caches, a write through the cache, a read that sees it: the same calls for every deployment. */
  private static void readWriteRead(Dendrite<Integer, Scores.Score> scores, int id) {
    assertThat(scores.get("range", id, id + 4)).isEmpty();
    scores.write("set", id + 2, id + 2, new Scores.SetVal(id + 2, 7));
    assertThat(scores.get("range", id, id + 4)).containsExactly(new Scores.Score(id + 2, 7, 0));
    assertThat(scores.rangeName()).isEqualTo("scores.id");
  }
}
