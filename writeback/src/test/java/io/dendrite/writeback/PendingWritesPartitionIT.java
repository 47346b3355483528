package io.dendrite.writeback;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.EntityKey;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The append-only pending-writes log over real IQ servers, with either kind of lock. */
class PendingWritesPartitionIT {

  @ParameterizedTest(name = "single process {0}")
  @ValueSource(booleans = {false, true})
  void listsInFirstRegistrationOrderUnlistsAndListsAgain(boolean singleProcess) {
    try (CacheServers cache = new CacheServers(2)) {
      PendingWritesPartition partition = partition(cache, singleProcess);
      assertThat(partition.add(key(1), Instant.ofEpochMilli(10))).isEqualTo(Outcome.OK);
      assertThat(partition.add(key(2), Instant.ofEpochMilli(20))).isEqualTo(Outcome.OK);
      assertThat(partition.add(key(3), Instant.ofEpochMilli(30))).isEqualTo(Outcome.OK);
      partition.removeAll(List.of(key(1), key(3)));
      assertThat(partition.add(key(1), Instant.ofEpochMilli(40))).isEqualTo(Outcome.OK);

      assertThat(partition.entries()).containsExactly(
          new PendingWritesPartition.Entry(new EntityKey("t", 2L), Instant.ofEpochMilli(20)),
          new PendingWritesPartition.Entry(new EntityKey("t", 1L), Instant.ofEpochMilli(40)));
      // Both replicas hold the same log: the second one alone gives the same list.
      cache.lose(cache.servers.indexOf(cache.servers.stream().filter(server -> cache.client.serversFor(
          "PendingWrites:0", 2).get(0).port() == server.port()).findFirst().orElseThrow()));
      assertThat(partition.entries()).extracting(PendingWritesPartition.Entry::key)
          .containsExactly(new EntityKey("t", 2L), new EntityKey("t", 1L));
    }
  }

  @ParameterizedTest(name = "single process {0}")
  @ValueSource(booleans = {false, true})
  void drainsCompactTheLogOnceUnlistedLinesOutnumberListedOnes(boolean singleProcess) {
    try (CacheServers cache = new CacheServers(2)) {
      PendingWritesPartition partition = partition(cache, singleProcess);
      partition.add(key(0), Instant.ofEpochMilli(1));
      for (int round = 1; round <= 100; round++) {
        partition.add(key(round), Instant.ofEpochMilli(round));
        partition.removeAll(List.of(key(round)));
      }
      List<String> lines = List.of(cache.client.getReplicated("PendingWrites:0", 2).orElseThrow().text().split("\n"));
      assertThat(lines.size()).as("log lines after 100 listings and unlistings").isLessThan(70);
      assertThat(partition.entries()).extracting(PendingWritesPartition.Entry::key)
          .containsExactly(new EntityKey("t", 0L));

      partition.removeAll(IntStream.range(200, 300).mapToObj(PendingWritesPartitionIT::key).toList());
      assertThat(cache.client.getReplicated("PendingWrites:0", 2).orElseThrow().text().split("\n"))
          .as("unlisting documents that were not listed appends nothing").hasSameSizeAs(lines);
      partition.removeAll(List.of(key(0)));
      assertThat(partition.entries()).isEmpty();
      assertThat(cache.client.getReplicated("PendingWrites:0", 2)).as("an empty log is deleted").isEmpty();
    }
  }

  private static PendingWritesPartition partition(CacheServers cache, boolean singleProcess) {
    KeyLocks locks = singleProcess ? KeyLocks.inProcess(4) : KeyLocks.cacheLeases(cache.client);
    return new PendingWritesPartition(new PinnedReplicas(cache.client, 2), locks, 0);
  }

  private static String key(long id) {
    return BufferedWriteKey.of(new EntityKey("t", id));
  }
}
