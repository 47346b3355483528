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
import io.micrometer.core.instrument.FunctionCounter;
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
      // The owner's gets as one process counts them: the first missed, the write refreshed it,
      // the second hit (from the near cache or the servers).
      assertThat(gets(registry, "miss")).isEqualTo(1);
      assertThat(gets(registry, "hit")).isEqualTo(1);
      assertThat(registry.get("cache.puts").functionCounter().count()).isEqualTo(2);
      assertThat(registry.get("cache.size").tag("tier", "remote").gauge().value()).isEqualTo(1);
      service.close();
      assertThat(events).contains("lost scores.id.0", "lost scores.id.1");
      assertThat(registry.get("dendrite.ranges.lost").functionCounter().count()).isEqualTo(2);
      assertThat(registry.get("dendrite.ranges.owned").gauge().value()).isZero();
      assertThat(gets(registry, "miss")).as("the ranges given up keep their counts").isEqualTo(1);
      assertThat(gets(registry, "hit")).isEqualTo(1);
      assertThat(registry.get("cache.size").tag("tier", "remote").gauge().value())
          .as("but no longer hold anything here")
          .isZero();
    }
  }

  /**
   * Each part of a get counts once in the service, where it was answered: a part of a range served elsewhere that the
   * cache holds counts as this process's hit, read directly; one it forwards counts at the owner.
   */
  @Test
  void aProcessCountsItsDirectHitsAndItsOwnRangesGets(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    table.put(10, new Scores.Score(10, 1, 0));
    table.put(40, new Scores.Score(40, 1, 0));
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(1);
        PartitionedDendrite<Integer, Scores.Score> a = member(cacheTier, table, zk, "a");
        PartitionedDendrite<Integer, Scores.Score> b = member(cacheTier, table, zk, "b")) {
      assertThat(a.awaitSettled(2, Duration.ofSeconds(30))).isTrue();
      assertThat(b.awaitSettled(2, Duration.ofSeconds(30))).isTrue();
      assertThat(a.servedRanges()).hasSize(1);
      // [0, 29] is range 0, [30, 59] range 1: one is a's, the other b's.
      boolean aServesTheFirst = a.servedRanges().contains("scores.id.0");
      int ofA = aServesTheFirst ? 10 : 40;
      int ofB = aServesTheFirst ? 40 : 10;
      SimpleMeterRegistry metersOfA = new SimpleMeterRegistry();
      SimpleMeterRegistry metersOfB = new SimpleMeterRegistry();
      PartitionedMeters.of(a).bindTo(metersOfA);
      PartitionedMeters.of(b).bindTo(metersOfB);

      assertThat(a.get("range", ofB, ofB + 5)).hasSize(1);
      assertThat(gets(metersOfA, "miss") + gets(metersOfA, "hit"))
          .as("forwarded: not a's to count")
          .isZero();
      assertThat(gets(metersOfB, "miss")).as("the owner's miss").isEqualTo(1);
      assertThat(a.get("range", ofB, ofB + 5)).hasSize(1);
      assertThat(gets(metersOfA, "hit")).as("read directly from the cache").isEqualTo(1);
      assertThat(a.cacheMetrics().roundTripsPerHit()).isEqualTo(1);
      assertThat(gets(metersOfB, "miss") + gets(metersOfB, "hit")).isEqualTo(1);

      assertThat(a.get("range", ofA, ofA + 5)).hasSize(1);
      assertThat(gets(metersOfA, "miss")).as("a's own range: a's miss").isEqualTo(1);
      assertThat(
              metersOfA.get("dendrite.forwarded").tag("operation", "get").functionCounter().count())
          .isEqualTo(1);
    }
  }

  private static PartitionedDendrite<Integer, Scores.Score> member(
      EmbeddedIqServers cacheTier,
      Map<Integer, Scores.Score> table,
      ZooKeeperAddress zk,
      String name) {
    return (PartitionedDendrite<Integer, Scores.Score>)
        scores(cacheTier, table)
            .deployment(
                ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                    .member(name)
                    .ranges(2)
                    .sessionTimeout(Duration.ofSeconds(3))
                    .forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback()))
            .build();
  }

  /** {@code cache.gets{result}} over both tiers. */
  private static double gets(SimpleMeterRegistry registry, String result) {
    return registry.find("cache.gets").tag("result", result).functionCounters().stream()
        .mapToDouble(FunctionCounter::count)
        .sum();
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
