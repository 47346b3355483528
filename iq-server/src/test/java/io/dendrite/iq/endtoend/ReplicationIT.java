package io.dendrite.iq.endtoend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ReplicationIT {

  private final IqServers cluster =
      new IqServers(3, client -> client, server -> server.pinnedMemoryBytes(64 * 1024));
  private final IqClient client = cluster.client;

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void replicatedWritesLandPinnedOnExactlyRDistinctServers() throws Exception {
    byte[] value = "buffered".getBytes(StandardCharsets.UTF_8);
    List<ServerAddress> replicas = client.replicaPlacement().serversFor("bw:1", 2);

    assertThat(client.replicaPlacement().store(2).set("bw:1", value)).isEqualTo(Outcome.OK);

    for (ServerAddress server : cluster.addresses()) {
      try (IqClient direct = IqClient.builder().servers(server.toString()).build()) {
        boolean expected = replicas.contains(server);
        assertThat(direct.get("bw:1").isPresent()).as("copy on %s", server).isEqualTo(expected);
        assertThat(IqServers.stats(server).get("pinned_items")).isEqualTo(expected ? "1" : "0");
      }
    }
    assertThat(client.replicaPlacement().store(2).get("bw:1").orElseThrow().text())
        .isEqualTo("buffered");
    assertThat(client.replicaPlacement().store(2).delete("bw:1")).isEqualTo(Outcome.OK);
    assertThat(client.replicaPlacement().store(2).get("bw:1")).isEmpty();
  }

  @Test
  void replicatedAppendsLandPinnedOnEveryReplicaAndEachReplicaCanBeRead() throws Exception {
    List<ServerAddress> replicas = client.replicaPlacement().serversFor("log:1", 2);
    assertThat(
            client
                .replicaPlacement()
                .store(2)
                .append("log:1", List.of(IqServers.bytes("a\n"), IqServers.bytes("b\n"))))
        .isEqualTo(Outcome.OK);
    assertThat(client.replicaPlacement().store(2).append("log:1", List.of(IqServers.bytes("c\n"))))
        .isEqualTo(Outcome.OK);

    for (ServerAddress server : cluster.addresses()) {
      try (IqClient direct = IqClient.builder().servers(server.toString()).build()) {
        boolean expected = replicas.contains(server);
        assertThat(direct.get("log:1").map(CacheValue::text))
            .as("copy on %s", server)
            .isEqualTo(expected ? Optional.of("a\nb\nc\n") : Optional.empty());
        assertThat(IqServers.stats(server).get("pinned_items")).isEqualTo(expected ? "1" : "0");
      }
    }
    try (IqClient direct = IqClient.builder().servers(replicas.get(0).toString()).build()) {
      direct.delete("log:1"); // as a restarted server that lost its copy
    }
    assertThat(client.replicaPlacement().store(2).append("log:1", List.of(IqServers.bytes("d\n"))))
        .isEqualTo(Outcome.OK);
    assertThat(client.replicaPlacement().store(2).getEach("log:1"))
        .extracting(CacheValue::text)
        .containsExactly("d\n", "a\nb\nc\nd\n");
    assertThatThrownBy(() -> client.replicaPlacement().store(2).append("log:1", List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nothing to append");
  }

  @Test
  void batchReadsTakeEachKeyFromItsFirstReplicaThatHasItAndBatchDeletesReachEveryReplica() {
    List<String> keys = List.of("bw:a", "bw:b", "bw:c", "bw:d");
    for (String key : keys.subList(0, 3)) {
      assertThat(client.replicaPlacement().store(2).set(key, IqServers.bytes(key)))
          .isEqualTo(Outcome.OK);
    }
    try (IqClient direct =
        IqClient.builder()
            .servers(client.replicaPlacement().serversFor("bw:b", 2).get(0).toString())
            .build()) {
      direct.delete("bw:b"); // as a restarted first replica that lost its copy
    }

    assertThat(client.replicaPlacement().store(2).getAll(keys))
        .containsOnlyKeys("bw:a", "bw:b", "bw:c")
        .allSatisfy((key, value) -> assertThat(value.text()).isEqualTo(key));

    List<java.util.concurrent.CompletableFuture<Outcome>> deletes =
        keys.stream().map(key -> client.replicaPlacement().store(2).deleteAsync(key)).toList();
    assertThat(deletes)
        .extracting(java.util.concurrent.CompletableFuture::join)
        .containsExactly(Outcome.OK, Outcome.OK, Outcome.OK, Outcome.NOT_FOUND);
    assertThat(client.replicaPlacement().store(2).getAll(keys)).isEmpty();
    for (ServerAddress server : cluster.addresses()) {
      assertThat(uncheckedStats(server).get("pinned_items"))
          .as("pinned on %s", server)
          .isEqualTo("0");
    }
  }

  @Test
  void batchReadsSurviveALostServerAndTakeAKeyWhoseReplicasAreAllLostAsAbsent() {
    String onLost = cluster.keyOn(0, "bw:lost");
    String elsewhere = cluster.keyOn(1, "bw:kept");
    assertThat(client.replicaPlacement().store(2).set(onLost, IqServers.bytes("one")))
        .isEqualTo(Outcome.OK);
    assertThat(client.replicaPlacement().store(1).set(elsewhere, IqServers.bytes("two")))
        .isEqualTo(Outcome.OK);
    cluster.servers.remove(0).close();

    assertThat(client.replicaPlacement().store(2).getAll(List.of(onLost)).get(onLost).text())
        .isEqualTo("one");
    assertThat(client.replicaPlacement().store(1).getAll(List.of(onLost, elsewhere)))
        .containsOnlyKeys(elsewhere);
    assertThat(client.replicaPlacement().store(1).get(onLost))
        .as("as the one-key read has it")
        .isEmpty();
  }

  @Test
  void oneReplicaOfALogCanBeAppendedToAloneAndStatsTellOneRunOfAServerFromTheNext() {
    List<ServerAddress> replicas = client.replicaPlacement().serversFor("log:2", 2);
    assertThat(client.replicaPlacement().store(2).append("log:2", List.of(IqServers.bytes("a\n"))))
        .isEqualTo(Outcome.OK);
    assertThat(client.servers().appendOn(replicas.get(1), "log:2", List.of(IqServers.bytes("b\n"))))
        .isEqualTo(Outcome.OK);
    assertThat(client.replicaPlacement().store(2).getEach("log:2"))
        .extracting(CacheValue::text)
        .containsExactly("a\n", "a\nb\n");

    ServerAddress first = cluster.addresses().get(0);
    String run = client.servers().stats(first).get("run_id");
    assertThat(run).isNotBlank().isEqualTo(client.servers().stats(first).get("run_id"));
    int port = first.port();
    cluster.servers.set(0, restartedOn(cluster.servers.get(0), port));
    assertThat(client.servers().stats(first).get("run_id"))
        .as("a new run on the same address")
        .isNotBlank()
        .isNotEqualTo(run);
  }

  private static io.dendrite.iq.server.IqServer restartedOn(
      io.dendrite.iq.server.IqServer server, int port) {
    server.close();
    return io.dendrite.iq.server.IqServer.start(
        io.dendrite.iq.server.IqServerConfig.builder().port(port).build());
  }

  private static java.util.Map<String, String> uncheckedStats(ServerAddress server) {
    try {
      return IqServers.stats(server);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void pinnedWritesReportAFullQuotaAndUnpinFreesIt() {
    byte[] chunk = new byte[16 * 1024];
    try (IqClient direct =
        IqClient.builder().servers(cluster.addresses().get(0).toString()).build()) {
      Outcome outcome = Outcome.OK;
      int stored = 0;
      while (outcome == Outcome.OK && stored < 100) {
        outcome = direct.setPinned("pin:" + stored, chunk);
        stored += outcome == Outcome.OK ? 1 : 0;
      }
      assertThat(outcome).isEqualTo(Outcome.PINNED_MEMORY_FULL);
      assertThat(stored).isBetween(1, 4);
      assertThat(direct.set("unpinned", chunk)).isEqualTo(Outcome.OK);

      assertThat(direct.unpin("pin:0")).isEqualTo(Outcome.OK);
      assertThat(direct.setPinned("pin:again", chunk)).isEqualTo(Outcome.OK);
    }
  }
}
