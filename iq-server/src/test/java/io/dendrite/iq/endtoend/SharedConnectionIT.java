package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.Flight;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client has no I/O thread: callers write their requests and read replies themselves, taking turns on a shared
 * connection (see {@code SocketConnection}). These tests pin down what that must never break: every caller gets
 * its own reply, a reply nobody waits for still completes its future, and a callback may call the client again.
 */
class SharedConnectionIT {

  private final IqServers cluster =
      new IqServers(
          1,
          builder -> builder.connectionsPerServer(1).requestTimeout(Duration.ofSeconds(20)),
          config -> config);
  private final IqClient client = cluster.client;

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void threadsSharingOneConnectionEachReadTheirOwnReplies() throws Exception {
    int threads = 8;
    int keys = 50;
    for (int k = 0; k < keys; k++) {
      assertThat(client.set("k" + k, bytes("v" + k + "-" + "x".repeat(k * 37))))
          .isEqualTo(Outcome.OK);
    }
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        results.add(
            pool.submit(
                () -> {
                  int checked = 0;
                  for (int i = 0; i < 2_000; i++) {
                    int k = (thread * 7 + i) % keys;
                    // Sync, async-then-join and multi-get interleave on the one connection.
                    Optional<CacheValue> found =
                        switch (i % 3) {
                          case 0 -> client.get("k" + k);
                          case 1 -> client.getAsync("k" + k).join();
                          default ->
                              Optional.ofNullable(client.getAll(List.of("k" + k)).get("k" + k));
                        };
                    assertThat(found)
                        .hasValueSatisfying(
                            value ->
                                assertThat(value.text())
                                    .startsWith("v" + k + "-")
                                    .hasSize(2 + String.valueOf(k).length() + k * 37));
                    checked++;
                  }
                  return checked;
                }));
      }
      for (Future<Integer> result : results) {
        assertThat(result.get(120, TimeUnit.SECONDS)).isEqualTo(2_000);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aReplyThatNoThreadWaitsForStillCompletesItsFuture() throws Exception {
    client.set("cb", bytes("value"));
    CountDownLatch called = new CountDownLatch(100);
    AtomicInteger wrong = new AtomicInteger();
    for (int i = 0; i < 100; i++) {
      client
          .getAsync("cb")
          .thenAccept(
              found -> {
                if (!found.map(CacheValue::text).equals(Optional.of("value"))) {
                  wrong.incrementAndGet();
                }
                called.countDown();
              });
    }
    assertThat(called.await(30, TimeUnit.SECONDS))
        .as("every callback ran without anyone joining")
        .isTrue();
    assertThat(wrong).hasValue(0);
  }

  @Test
  void aCallbackMayCallTheClientSynchronously() throws Exception {
    client.set("first", bytes("second"));
    client.set("second", bytes("done"));
    AtomicReference<String> chained = new AtomicReference<>();
    CountDownLatch finished = new CountDownLatch(1);
    client
        .getAsync("first")
        .thenAccept(
            first -> {
              chained.set(client.get(first.orElseThrow().text()).orElseThrow().text());
              finished.countDown();
            });
    assertThat(finished.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(chained).hasValue("done");
  }

  @Test
  void aRequestNobodyWaitsForDoesNotShiftTheRepliesOfTheNext() {
    client.set("a", bytes("A"));
    client.set("b", bytes("B"));
    CompletableFuture<Optional<CacheValue>> ignored = client.getAsync("a");
    assertThat(client.get("b"))
        .hasValueSatisfying(value -> assertThat(value.text()).isEqualTo("B"));
    assertThat(ignored.join()).hasValueSatisfying(value -> assertThat(value.text()).isEqualTo("A"));
  }

  /**
   * The restart shows as the server's epoch moving (see {@code ServerConnection}), which a lease from before reports
   * as {@link Outcome#STATE_LOST}: had the client not seen the idle connection closed, the fill would have gone out
   * on it and failed instead.
   */
  @Test
  void aServerThatClosedAnIdleConnectionIsReconnectedToAndItsLeasesFromBeforeAreLost() {
    LeaseHandle lease = ((ReadResult.Leased) client.read("k")).lease();
    int port = cluster.servers.get(0).port();
    cluster.servers.get(0).close();
    cluster.servers.set(
        0,
        io.dendrite.iq.server.IqServer.start(
            io.dendrite.iq.server.IqServerConfig.builder()
                .port(port)
                .leaseLifetime(Duration.ofMillis(10_000))
                .build()));

    assertThat(lease.fill(bytes("1")))
        .as("seen closed without a request failing first")
        .isEqualTo(Outcome.STATE_LOST);
    assertThat(client.get("k")).as("the restarted server is empty").isEmpty();
  }

  /**
   * A reader that took another thread's reply off the connection completes it only after it gave up the reader
   * role, and runs callbacks before that (here one that blocks). The other thread must park until then, not take
   * the empty reader role over and over: it once spun for as long as the reader was descheduled there, which on a
   * busy machine cost a sixth of a write-back update's allocation and its CPU. The spin shows as the waiter's CPU
   * time while the reader is held: a parked thread uses next to none, a spinning one whatever the scheduler gives
   * it. Both requests go out in one write (a flight) so that their replies come back together and the first
   * reader takes both; when they did not (the waiter read its own reply), the attempt is repeated.
   */
  @Test
  void aWaiterWhoseReplyAnotherReaderTookParksUntilItIsCompleted() throws Exception {
    client.set("first", bytes("1"));
    client.set("mine", bytes("2"));
    java.lang.management.ThreadMXBean cpu =
        java.lang.management.ManagementFactory.getThreadMXBean();
    boolean conclusive = false;
    for (int attempt = 0; attempt < 20 && !conclusive; attempt++) {
      CountDownLatch callbackEntered = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Optional<CacheValue>> first;
      CompletableFuture<Optional<CacheValue>> mine;
      try (Flight flight = client.flight()) {
        first = client.getAsync("first");
        first.whenComplete(
            (value, failure) -> {
              callbackEntered.countDown();
              awaitQuietly(release);
            });
        mine = client.getAsync("mine");
      }
      Thread reader = new Thread(first::join);
      reader.start();
      assertThat(callbackEntered.await(10, TimeUnit.SECONDS)).isTrue();
      AtomicReference<Optional<CacheValue>> got = new AtomicReference<>();
      CompletableFuture<Optional<CacheValue>> awaited = mine;
      Thread waiter = new Thread(() -> got.set(awaited.join()));
      waiter.start();
      Thread.sleep(1_000);
      long cpuNanos = cpu.getThreadCpuTime(waiter.getId());
      conclusive = waiter.isAlive(); // else it read its own reply: the reader had not taken it
      release.countDown();
      waiter.join(10_000);
      reader.join(10_000);
      assertThat(got.get()).hasValueSatisfying(value -> assertThat(value.text()).isEqualTo("2"));
      if (conclusive) {
        assertThat(Duration.ofNanos(cpuNanos))
            .as("CPU the waiter used in the second its reply was held")
            .isLessThan(Duration.ofMillis(100));
      }
    }
    assertThat(conclusive).as("an attempt in which the first reader took both replies").isTrue();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
