package io.dendrite.iq.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HashRingTest {

  private static final int KEYS = 20_000;

  private static List<ServerAddress> servers(int count) {
    List<ServerAddress> servers = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      servers.add(new ServerAddress("10.0.0." + (i + 1), 11211));
    }
    return servers;
  }

  @Test
  void addingAServerMovesAboutOneNthOfTheKeysAndOnlyToIt() {
    List<ServerAddress> four = servers(4);
    HashRing before = new HashRing(four.subList(0, 3), 160);
    HashRing after = new HashRing(four, 160);
    int moved = 0;
    for (int i = 0; i < KEYS; i++) {
      String key = "key:" + i;
      ServerAddress was = before.serverFor(key);
      ServerAddress now = after.serverFor(key);
      if (!was.equals(now)) {
        moved++;
        assertThat(now).as("a moved key goes to the new server").isEqualTo(four.get(3));
      }
    }
    assertThat(moved / (double) KEYS).isBetween(0.18, 0.32);
  }

  @Test
  void spreadsKeysEvenly() {
    HashRing ring = new HashRing(servers(4), 160);
    Map<ServerAddress, Integer> counts = new HashMap<>();
    for (int i = 0; i < KEYS; i++) {
      counts.merge(ring.serverFor("user:" + i), 1, Integer::sum);
    }
    assertThat(counts).hasSize(4);
    counts
        .values()
        .forEach(count -> assertThat(count).isBetween(KEYS / 4 * 7 / 10, KEYS / 4 * 13 / 10));
  }

  @Test
  void doesNotDependOnTheOrderServersAreListed() {
    List<ServerAddress> servers = servers(5);
    List<ServerAddress> reversed = new ArrayList<>(servers);
    java.util.Collections.reverse(reversed);
    HashRing a = new HashRing(servers, 160);
    HashRing b = new HashRing(reversed, 160);
    for (int i = 0; i < 2_000; i++) {
      assertThat(a.serverFor("k" + i)).isEqualTo(b.serverFor("k" + i));
    }
  }

  @Test
  void replicasAreDistinctAndStartWithTheOwner() {
    HashRing ring = new HashRing(servers(5), 160);
    for (int i = 0; i < 1_000; i++) {
      String key = "w" + i;
      List<ServerAddress> replicas = ring.serversFor(key, 3);
      assertThat(replicas).hasSize(3).doesNotHaveDuplicates();
      assertThat(replicas.get(0)).isEqualTo(ring.serverFor(key));
    }
    assertThatThrownBy(() -> ring.serversFor("x", 6)).isInstanceOf(IllegalArgumentException.class);
  }
}
