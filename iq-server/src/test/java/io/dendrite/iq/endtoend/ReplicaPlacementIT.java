package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Replica placement with a server taken out: the next server clockwise substitutes for it, clients that disagree
 * about placement still share the key's live servers, and once the server is back the substitutes' copies are
 * deleted, but only after every holder that could still write them is fenced.
 */
class ReplicaPlacementIT {
  private static final int REPLICAS = 2;
  private static final long LEASE_MILLIS = 300;

  private final IqServers cluster =
      new IqServers(
          3,
          client -> client.requestTimeout(Duration.ofMillis(500)),
          server -> server.leaseLifetime(Duration.ofMillis(LEASE_MILLIS)));
  private final IqClient client = cluster.client;
  private final List<String> keys = IntStream.range(0, 300).mapToObj(i -> "BW:k" + i).toList();

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void aServerTakenOutIsSkippedAndTheLiveServersOfEveryKeyStayInItsPlacement() {
    ServerAddress out = cluster.addresses().get(0);
    List<List<ServerAddress>> before =
        keys.stream().map(key -> client.replicaPlacement().serversFor(key, REPLICAS)).toList();

    assertThat(client.replicaPlacement().exclude(out)).isTrue();
    assertThat(client.replicaPlacement().exclude(out)).as("already out").isFalse();

    int moved = 0;
    for (int i = 0; i < keys.size(); i++) {
      List<ServerAddress> after = client.replicaPlacement().serversFor(keys.get(i), REPLICAS);
      List<ServerAddress> live =
          before.get(i).stream().filter(server -> !server.equals(out)).toList();
      assertThat(after).hasSize(REPLICAS).doesNotContain(out).doesNotHaveDuplicates();
      assertThat(after.subList(0, live.size()))
          .as("the live servers first, in their order")
          .isEqualTo(live);
      moved += before.get(i).contains(out) ? 1 : 0;
    }
    assertThat(moved).as("keys that had a copy on the server taken out").isGreaterThan(0);
    assertThat(client.replicaPlacement().version()).isEqualTo(1);

    assertThat(client.replicaPlacement().exclude(cluster.addresses().get(1))).isTrue();
    assertThat(client.replicaPlacement().exclude(cluster.addresses().get(2)))
        .as("the last server stays in")
        .isFalse();
    assertThat(client.replicaPlacement().serversFor("BW:k0", REPLICAS))
        .containsExactly(cluster.addresses().get(2));

    assertThatThrownBy(() -> client.replicaPlacement().exclude(new ServerAddress("127.0.0.1", 1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void whenTheServerIsBackTheSubstitutesCopiesAreDeletedOnceHoldersAreFenced() throws Exception {
    ServerAddress out = cluster.addresses().get(0);
    List<String> moved =
        keys.stream()
            .filter(key -> client.replicaPlacement().serversFor(key, REPLICAS).contains(out))
            .toList();
    client.replicaPlacement().exclude(out);
    for (String key : keys) {
      assertThat(client.replicaPlacement().store(REPLICAS).set(key, bytes("v-" + key)))
          .isEqualTo(Outcome.OK);
    }
    assertThat(client.replicaPlacement().deleteStrays())
        .as("the substitutes' copies are in placement while it is out")
        .isZero();

    assertThat(client.replicaPlacement().include(out)).isTrue();
    assertThat(client.replicaPlacement().include(out)).as("already in").isFalse();
    assertThat(client.replicaPlacement().deleteStrays())
        .as("a holder under the old placement may still be writing")
        .isZero();

    int deleted = 0;
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (deleted < moved.size() && System.nanoTime() < deadline) {
      Thread.sleep(50);
      deleted += client.replicaPlacement().deleteStrays();
    }
    assertThat(deleted).as("one stray per key that had a substitute").isEqualTo(moved.size());

    List<String> misplaced = new ArrayList<>();
    for (ServerAddress server : cluster.addresses()) {
      try (IqClient direct = IqClient.builder().servers(List.of(server)).build()) {
        direct.getAll(keys).keySet().stream()
            .filter(key -> !client.replicaPlacement().serversFor(key, REPLICAS).contains(server))
            .forEach(key -> misplaced.add(server + " holds " + key));
      }
    }
    assertThat(misplaced).as("copies outside their placement").isEmpty();
    for (String key : keys) {
      assertThat(client.replicaPlacement().store(REPLICAS).get(key)).as(key).isPresent();
    }
  }
}
