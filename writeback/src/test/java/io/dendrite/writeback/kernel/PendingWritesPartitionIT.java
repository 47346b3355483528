package io.dendrite.writeback.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.WriteOptions;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.EntityKey;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pending-writes log over real IQ servers: listings added and removed by id, read merged over replicas. */
class PendingWritesPartitionIT {

  @Test
  void listsInFirstListingOrderRemovesExactlyTheListingsSeenAndListsAgain() {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2)) {
      PendingWritesPartition partition = partition(cache);
      assertThat(partition.add(key(1), Instant.ofEpochMilli(10))).isEqualTo(Outcome.OK);
      assertThat(partition.add(key(2), Instant.ofEpochMilli(20))).isEqualTo(Outcome.OK);
      assertThat(partition.add(key(3), Instant.ofEpochMilli(30))).isEqualTo(Outcome.OK);
      PendingWritesPartition.Found seen = listingsOf(cache, key(1), key(3));
      // A writer lists document 1 again after the drain read its listings: the drain must not
      // remove that one.
      assertThat(partition.add(key(1), Instant.ofEpochMilli(40))).isEqualTo(Outcome.OK);
      remove(partition, seen);

      assertThat(partition.entries())
          .containsExactly(
              new PendingWritesPartition.Entry(new EntityKey("t", 2L), Instant.ofEpochMilli(20)),
              new PendingWritesPartition.Entry(new EntityKey("t", 1L), Instant.ofEpochMilli(40)));
      // Both replicas hold the same listings: the second one alone gives the same list.
      cache.lose(
          cache.servers.indexOf(
              cache.servers.stream()
                  .filter(
                      server ->
                          cache
                                  .client
                                  .replicaPlacement()
                                  .serversFor("PendingWrites:0", 2)
                                  .get(0)
                                  .port()
                              == server.port())
                  .findFirst()
                  .orElseThrow()));
      assertThat(partition.entries())
          .extracting(PendingWritesPartition.Entry::key)
          .containsExactly(new EntityKey("t", 2L), new EntityKey("t", 1L));
    }
  }

  /** A replica that lost lines (restarted empty and recreated by the next append) hides nothing: reads merge. */
  @Test
  void aReplicaThatMissedListingsHidesNothing() {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2)) {
      PendingWritesPartition partition = partition(cache);
      partition.add(key(1), Instant.ofEpochMilli(10));
      partition.add(key(2), Instant.ofEpochMilli(20));
      // The first replica forgets everything, as a restarted server would, and only takes appends
      // from now on.
      var first = cache.client.replicaPlacement().serversFor("PendingWrites:0", 2).get(0);
      try (var one = io.dendrite.iq.client.IqClient.builder().servers(List.of(first)).build()) {
        one.delete("PendingWrites:0");
      }
      partition.add(key(3), Instant.ofEpochMilli(30));

      assertThat(partition.entries())
          .extracting(PendingWritesPartition.Entry::key)
          .containsExactly(new EntityKey("t", 1L), new EntityKey("t", 2L), new EntityKey("t", 3L));
    }
  }

  @Test
  void drainsCompactTheLogOnceRemovedListingsOutnumberLiveOnes() {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2)) {
      PendingWritesPartition partition = partition(cache);
      partition.add(key(0), Instant.ofEpochMilli(1));
      for (int round = 1; round <= 100; round++) {
        partition.add(key(round), Instant.ofEpochMilli(round));
        remove(partition, listingsOf(cache, key(round)));
      }
      for (var copy :
          cache
              .client
              .replicaPlacement()
              .store(2)
              .getAllOnEach(List.of("PendingWrites:0"))
              .get("PendingWrites:0")
              .values()) {
        assertThat(copy.text().split("\n").length)
            .as("log lines after 100 listings and removals")
            .isLessThan(70);
      }
      assertThat(partition.entries())
          .extracting(PendingWritesPartition.Entry::key)
          .containsExactly(new EntityKey("t", 0L));

      remove(partition, listingsOf(cache, key(0)));
      assertThat(partition.entries()).isEmpty();
    }
  }

  /** A compaction that raced with an append on one replica leaves that replica's log whole (CAS). */
  @Test
  void aCompactionNeverDropsAnAppendThatRacedWithIt() {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2)) {
      PendingWritesPartition partition = partition(cache);
      partition.add(key(0), Instant.ofEpochMilli(1));
      var copies =
          cache
              .client
              .replicaPlacement()
              .store(2)
              .getAllOnEach(List.of("PendingWrites:0"))
              .get("PendingWrites:0");
      partition.add(key(1), Instant.ofEpochMilli(2)); // lands after the read, before the rewrite
      copies.forEach(
          (server, copy) ->
              assertThat(
                      cache
                          .client
                          .servers()
                          .casOn(
                              server,
                              "PendingWrites:0",
                              new byte[0],
                              copy.cas(),
                              WriteOptions.PINNED))
                  .isEqualTo(Outcome.EXISTS));
      assertThat(partition.entries()).hasSize(2);
    }
  }

  /** What a drain reads while it holds the documents' locks: the listings of {@code bufferedKeys}, and the log. */
  private static PendingWritesPartition.Found listingsOf(
      EmbeddedIqServers cache, String... bufferedKeys) {
    PendingWritesPartition partition = partition(cache);
    return PendingWritesPartition.listingsOf(
            new PinnedReplicas(cache.client, 2), List.of(partition), List.of(bufferedKeys))
        .getOrDefault(
            partition,
            new PendingWritesPartition.Found(
                List.of(), new PendingWritesPartition.Log(List.of(), 0)));
  }

  /** Removes what {@code found} holds, as a drain does after deleting the buffered writes. */
  private static void remove(PendingWritesPartition partition, PendingWritesPartition.Found found) {
    partition.remove(found.listings(), found.read());
  }

  private static PendingWritesPartition partition(EmbeddedIqServers cache) {
    return new PendingWritesPartition(new PinnedReplicas(cache.client, 2), 0);
  }

  private static String key(long id) {
    return BufferedWriteKey.of(new EntityKey("t", id));
  }
}
