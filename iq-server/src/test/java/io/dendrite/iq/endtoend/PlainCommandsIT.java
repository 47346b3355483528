package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.WriteOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PlainCommandsIT {

  private final IqServers cluster = new IqServers(3);
  private final IqClient client = cluster.client;

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void getSetAddAppendCasDeleteIncr() {
    assertThat(client.get("a")).isEmpty();
    assertThat(client.set("a", bytes("1"))).isEqualTo(Outcome.OK);
    assertThat(client.get("a")).hasValueSatisfying(v -> assertThat(v.text()).isEqualTo("1"));
    assertThat(client.add("a", bytes("2"), WriteOptions.DEFAULT)).isEqualTo(Outcome.NOT_STORED);
    assertThat(client.append("a", bytes("0"))).isEqualTo(Outcome.OK);
    assertThat(client.incr("a", 5)).isEqualTo(OptionalLong.of(15));
    assertThat(client.incr("missing", 5)).isEmpty();

    CacheValue read = client.get("a").orElseThrow();
    assertThat(client.cas("a", bytes("x"), read.cas(), WriteOptions.DEFAULT.withFlags(9)))
        .isEqualTo(Outcome.OK);
    assertThat(client.cas("a", bytes("y"), read.cas(), WriteOptions.DEFAULT))
        .isEqualTo(Outcome.EXISTS);
    assertThat(client.get("a").orElseThrow().flags()).isEqualTo(9);

    assertThat(client.delete("a")).isEqualTo(Outcome.OK);
    assertThat(client.delete("a")).isEqualTo(Outcome.NOT_FOUND);
  }

  @Test
  void aValueOverTheItemSizeIsARefusalNotALostConnection() throws Exception {
    try (IqServers small =
        new IqServers(1, settings -> settings, server -> server.maxItemSize(1024))) {
      // The server answers SERVER_ERROR, as memcached does. A CLIENT_ERROR to a request with data
      // would say the
      // data may have been read as commands, and the client would give up the connection.
      assertThatThrownBy(() -> small.client.set("big", new byte[1025]))
          .isInstanceOf(IqException.class)
          .isNotInstanceOf(IqConnectionException.class)
          .hasMessageContaining("SERVER_ERROR object too large for cache");
      assertThat(small.client.set("small", bytes("ok"))).isEqualTo(Outcome.OK);
      assertThat(small.client.get("small"))
          .hasValueSatisfying(v -> assertThat(v.text()).isEqualTo("ok"));
      assertThat(IqServers.stats(small.addresses().get(0)).get("total_connections"))
          .as("the client's one connection, kept through the refusal, and the one asking for stats")
          .isEqualTo("2");
    }
  }

  @Test
  void countsTheRequestsEachThreadSent() throws Exception {
    long before = client.threadCounters().requests();
    client.set(cluster.keyOn(0, "count"), bytes("1"));
    client.get(cluster.keyOn(0, "count"));
    client.getAll(
        List.of(cluster.keyOn(0, "count"), cluster.keyOn(1, "count"), cluster.keyOn(2, "count")));
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      assertThat(
              other
                  .submit(
                      () -> {
                        long start = client.threadCounters().requests();
                        client.delete("elsewhere");
                        return client.threadCounters().requests() - start;
                      })
                  .get())
          .isEqualTo(1);
    } finally {
      other.shutdown();
    }

    assertThat(client.threadCounters().requests() - before)
        .as("set, get, and a multi-get asking three servers")
        .isEqualTo(5);
  }

  @Test
  void multiGetGroupsKeysByServerAndReturnsOnlyHits() {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      keys.add("multi:" + i);
      assertThat(client.set("multi:" + i, bytes("v" + i))).isEqualTo(Outcome.OK);
    }
    assertThat(
            keys.stream()
                .map(key -> client.replicaPlacement().serversFor(key, 1).get(0))
                .distinct())
        .hasSize(3);
    keys.add("multi:absent");

    Map<String, CacheValue> hits = client.getAll(keys);

    assertThat(hits).hasSize(300).doesNotContainKey("multi:absent");
    hits.forEach(
        (key, value) -> assertThat(value.text()).isEqualTo("v" + key.substring("multi:".length())));
  }

  @Test
  void appendAllAppendsEveryValueInOneRequest() {
    assertThat(client.appendAll("log", List.of(bytes("a"), bytes("bc")), false))
        .isEqualTo(Outcome.OK);
    assertThat(client.appendAll("log", List.of(bytes("d"), bytes(""), bytes("ef")), false))
        .isEqualTo(Outcome.OK);
    assertThat(client.get("log").orElseThrow().text()).isEqualTo("abcdef");
  }

  @Test
  void manyThreadsShareOnePipelinedConnectionWithoutMixingReplies() throws Exception {
    try (IqClient single =
        IqClient.builder().servers(cluster.addresses().get(0).toString()).build()) {
      ExecutorService threads = Executors.newFixedThreadPool(8);
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int thread = t;
        workers.add(
            threads.submit(
                () -> {
                  List<CompletableFuture<?>> inFlight = new ArrayList<>();
                  for (int i = 0; i < 500; i++) {
                    String key = "p" + thread + ":" + i;
                    inFlight.add(
                        single
                            .setAsync(key, bytes(key), WriteOptions.DEFAULT)
                            .thenAccept(outcome -> assertThat(outcome).isEqualTo(Outcome.OK)));
                  }
                  inFlight.forEach(CompletableFuture::join);
                  inFlight.clear();
                  for (int i = 0; i < 500; i++) {
                    String key = "p" + thread + ":" + i;
                    inFlight.add(
                        single
                            .getAsync(key)
                            .thenAccept(
                                value -> assertThat(value.orElseThrow().text()).isEqualTo(key)));
                  }
                  inFlight.forEach(CompletableFuture::join);
                }));
      }
      for (Future<?> worker : workers) {
        worker.get();
      }
      threads.shutdown();
      assertThat(IqServers.stats(cluster.addresses().get(0)).get("curr_connections"))
          .isEqualTo("2");
    }
  }

  @Test
  void eachThreadKeepsToOneConnectionAndThreadsSpreadOverThem() throws Exception {
    ServerAddress server = cluster.addresses().get(0);
    try (IqClient pooled =
        IqClient.builder().servers(server.toString()).connectionsPerServer(3).build()) {
      storeAndReadBack(pooled, "one");
      // one thread, one connection, plus the stats socket itself
      assertThat(IqServers.stats(server).get("curr_connections")).isEqualTo("2");

      List<Thread> threads = new ArrayList<>();
      List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
      for (int t = 0; t < 3; t++) {
        String prefix = "t" + t;
        threads.add(
            new Thread(
                () -> {
                  try {
                    storeAndReadBack(pooled, prefix);
                  } catch (Throwable failed) {
                    failures.add(failed);
                  }
                }));
      }
      threads.forEach(Thread::start);
      for (Thread thread : threads) {
        thread.join();
      }
      assertThat(failures).isEmpty();
      // three threads spread over the three connections
      assertThat(IqServers.stats(server).get("curr_connections")).isEqualTo("4");
    }
  }

  private static void storeAndReadBack(IqClient client, String prefix) {
    List<CompletableFuture<Outcome>> stores = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      stores.add(client.setAsync(prefix + i, bytes("v" + i), WriteOptions.DEFAULT));
    }
    stores.forEach(store -> assertThat(store.join()).isEqualTo(Outcome.OK));
    for (int i = 0; i < 300; i++) {
      assertThat(client.get(prefix + i).orElseThrow().text()).isEqualTo("v" + i);
    }
  }
}
