package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreException;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.RangeCache;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Bad input to a {@link PartitionedDendrite} is refused before anything changes, with an error that says what is
 * wrong; a data-store failure at the owner reaches the caller as the same kind of exception. One process, an
 * in-memory table, real ZooKeeper and IQ servers.
 */
@ExtendWith(RealServers.class)
class PartitionedDendriteInputIT {

  @Test
  void badCallsAreRefusedSayingWhyAndChangeNothing(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        PartitionedDendrite<Integer, Scores.Score> dendrite =
            (PartitionedDendrite<Integer, Scores.Score>)
                InMemoryScores.dendrite(cacheTier.client, table, 59)
                    .query(
                        "broken",
                        (lower, upper) -> {
                          throw new java.sql.SQLException("the table is gone");
                        })
                    .deployment(
                        ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                            .ranges(6)
                            .forwardingSecurity(
                                ForwardingSecurity.unauthenticatedOnLoopback()) // one process
                            .sessionTimeout(Duration.ofSeconds(3)))
                    .build()) {
      assertThat(dendrite.awaitSettled(1, Duration.ofSeconds(30))).isTrue();
      assertThat(dendrite.servedRanges()).hasSize(6);

      assertThatThrownBy(() -> dendrite.write("set", 8, 12, new Scores.SetVal(8, 1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("a write must lie in one range")
          .hasMessageContaining("the next starts at 10");
      assertThatThrownBy(() -> dendrite.write("upsert", 3, 3, new Scores.SetVal(3, 1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no write command named \"upsert\"");
      assertThatThrownBy(() -> dendrite.write("set", 3, 3, "three"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("takes a " + Scores.SetVal.class.getName())
          .hasMessageContaining("java.lang.String");
      assertThatThrownBy(() -> dendrite.get("range", 5, 2))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("greater than upperBound");
      assertThatThrownBy(() -> dendrite.get("range", 0, 60))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("above the domain's maximum 59");
      assertThatThrownBy(() -> dendrite.get("scan", 0, 5))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no query named \"scan\"");
      assertThat(table).as("nothing was written").isEmpty();

      assertThatThrownBy(() -> dendrite.get("broken", 0, 5))
          .isInstanceOf(DataStoreException.class)
          .hasMessageContaining("the table is gone");

      dendrite.write("set", 12, 12, new Scores.SetVal(12, 7));
      assertThat(dendrite.get("range", 8, 14)).containsExactly(new Scores.Score(12, 7, 0));
      assertThat(dendrite.get("range", 8, 14)).containsExactly(new Scores.Score(12, 7, 0));
      assertThat(dendrite.metrics().servedHere()).isPositive();
    }
  }

  /**
   * A plain Dendrite and PartitionedDendrite processes on one range would each keep a PrInT the other never sees, and
   * each one's writes would leave the other's cached results stale: whichever comes second is refused.
   */
  @Test
  void aPlainDendriteAndAPartitionedOneRefuseEachOther(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2)) {
      Dendrite.Builder<Integer, Scores.Score> partitioned = onOneProcess(cacheTier, zk, table, 0);
      Dendrite.Builder<Integer, Scores.Score> plain =
          Dendrite.builder(DomainType.INTEGER, Scores.CODEC)
              .collection("scores")
              .domain("id")
              .cache(cacheTier.anotherClient());

      // The plain one first: it gives its record up when it closes, while the partitioned
      // processes' shared record lapses only a lifetime after the last one stops.
      try (RangeCache<Integer, Scores.Score> alone = plain.buildRangeCache()) {
        assertThatThrownBy(partitioned::build)
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("range scores/id is owned by a plain Dendrite (dendrite ");
      }
      try (Dendrite<Integer, Scores.Score> service = partitioned.build()) {
        assertThatThrownBy(plain::build)
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("range scores/id is served by PartitionedDendrite processes");
      }
    }
  }

  /**
   * A process whose start fails after it joined the range's shared ownership record (here: its forwarding port is
   * taken) gives the record up: it used to keep renewing it from a thread nobody could stop, so a plain
   * Dendrite on the range stayed refused in that JVM for good.
   */
  @Test
  void aStartThatFailsAfterJoiningTheRecordStopsRenewingIt(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2)) {
      try (java.net.ServerSocket taken =
          new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        Dendrite.Builder<Integer, Scores.Score> failing =
            onOneProcess(cacheTier, zk, table, taken.getLocalPort());
        assertThatThrownBy(failing::build)
            .as("the forwarding server cannot listen on a taken port")
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("cannot listen on 127.0.0.1:" + taken.getLocalPort())
            .hasMessageContaining("Address already in use");
      }
      // Its renewer stops at once; its thread ends a moment later.
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (renewerRunning() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(renewerRunning()).as("a thread still renewing the range's record").isFalse();
    }
  }

  /**
   * A one-process service over {@code table}, in two ranges of scores/id [0, 59], taking forwarded requests on
   * {@code port} (0: any free one).
   */
  private static Dendrite.Builder<Integer, Scores.Score> onOneProcess(
      EmbeddedIqServers cacheTier,
      ZooKeeperAddress zk,
      Map<Integer, Scores.Score> table,
      int port) {
    return InMemoryScores.dendrite(cacheTier.client, table, 59)
        .deployment(
            ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                .ranges(2)
                .listen("127.0.0.1", port)
                .sessionTimeout(Duration.ofSeconds(3))
                .forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback())); // one process
  }

  private static boolean renewerRunning() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(
            thread ->
                thread.isAlive() && thread.getName().equals("dendrite-claim Owner:scores:id"));
  }

  static Map<Integer, Scores.Score> subMap(Map<Integer, Scores.Score> table, int lower, int upper) {
    return new TreeMap<>(
        ((ConcurrentSkipListMap<Integer, Scores.Score>) table).subMap(lower, true, upper, true));
  }
}
