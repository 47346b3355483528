package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A range whose fence stands above every epoch its owner has (someone raised it to the largest epoch the servers
 * accept) can never be served by that owner, since fences never go down: the owner gives the range up with an
 * error instead of retrying its rebuild forever, and serves its other ranges.
 */
@ExtendWith(RealServers.class)
class UnpassableFenceIT {

  @Test
  void anOwnerGivesUpARangeItsEpochCanNeverPass(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2)) {
      assertThat(cacheTier.client.fences().raise("Fence:scores.id.0", 1L << 31).values())
          .containsOnly(1L << 31);
      long started = System.nanoTime();
      try (PartitionedDendrite<Integer, Scores.Score> dendrite =
          (PartitionedDendrite<Integer, Scores.Score>)
              InMemoryScores.dendrite(cacheTier.client, table, 19)
                  .deployment(
                      ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                          .ranges(2)
                          .forwardingSecurity(
                              ForwardingSecurity.unauthenticatedOnLoopback()) // one process
                          .sessionTimeout(Duration.ofSeconds(3)))
                  .build()) {
        // Not settled ever (a range it owns is not served): wait for the other range instead.
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!dendrite.servedRanges().contains("scores.id.1") && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        assertThat(dendrite.servedRanges())
            .as("the fenced-out range is given up, the other one served")
            .containsExactly("scores.id.1");
        dendrite.write("set", 12, 12, new Scores.SetVal(12, 7));
        assertThat(dendrite.get("range", 10, 14)).containsExactly(new Scores.Score(12, 7, 0));
      }
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .as("nothing spun forever: the process closed")
          .isLessThan(Duration.ofSeconds(60));
    }
  }
}
