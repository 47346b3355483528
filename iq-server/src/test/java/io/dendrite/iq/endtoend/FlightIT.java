package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.Flight;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.WriteOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A {@link Flight} holds a thread's requests and writes them together, one write per connection: when the thread
 * first waits for a reply, or when the flight closes. What must hold: nothing is written early (else there is no
 * batching), nothing a waiter needs is held (else it hangs), and nothing held is lost when the connection is.
 */
class FlightIT {

  private final IqServers cluster =
      new IqServers(
          2,
          builder -> builder.connectionsPerServer(1).requestTimeout(Duration.ofSeconds(20)),
          config -> config);
  private final IqClient client = cluster.client;

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void aFlightWritesItsRequestsOncePerServerWhenItCloses() throws Exception {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      keys.add(cluster.keyOn(0, "a" + i + "-"));
      keys.add(cluster.keyOn(1, "b" + i + "-"));
    }
    client.get("warm-up"); // connects, so that connecting is not counted below
    client.get(cluster.keyOn(1, "warm-up"));
    long writesBefore = client.threadCounters().writes();
    long requestsBefore = client.threadCounters().requests();
    List<CompletableFuture<Outcome>> stores = new ArrayList<>();
    try (Flight flight = client.flight()) {
      for (String key : keys) {
        stores.add(client.setAsync(key, bytes("v-" + key), WriteOptions.DEFAULT));
      }
      // Held: another thread's client does not see them yet.
      assertThat(valueSeenByAnotherThread(keys.get(0))).isEmpty();
      assertThat(client.threadCounters().writes()).isEqualTo(writesBefore);
    }
    assertThat(client.threadCounters().writes() - writesBefore).isEqualTo(2); // one per server
    assertThat(client.threadCounters().requests() - requestsBefore).isEqualTo(6);
    stores.forEach(store -> assertThat(store.join()).isEqualTo(Outcome.OK));
    for (String key : keys) {
      assertThat(client.get(key).orElseThrow().text()).isEqualTo("v-" + key);
    }
  }

  @Test
  void waitingForAReplyInsideAFlightFirstWritesWhatItHolds() {
    String key = cluster.keyOn(0, "w");
    client.get(key);
    long writesBefore = client.threadCounters().writes();
    try (Flight flight = client.flight()) {
      CompletableFuture<Outcome> stored = client.setAsync(key, bytes("one"), WriteOptions.DEFAULT);
      // Sent after the set, read in the same wait: one write for both.
      assertThat(client.get(key).orElseThrow().text()).isEqualTo("one");
      assertThat(stored).isCompletedWithValue(Outcome.OK);
      assertThat(client.threadCounters().writes() - writesBefore).isEqualTo(1);
      // A stage derived from a reply that is already in waits on nothing but the held request it
      // composes.
      CompletableFuture<Optional<CacheValue>> composed =
          stored.thenCompose(ok -> client.getAsync(key));
      assertThat(composed.join().orElseThrow().text()).isEqualTo("one");
    }
  }

  @Test
  void aFlightOpenedInsideAnotherWritesWhenTheOuterOneCloses() throws Exception {
    String key = cluster.keyOn(0, "n");
    client.get(key);
    CompletableFuture<Outcome> stored;
    try (Flight outer = client.flight()) {
      try (Flight inner = client.flight()) {
        stored = client.setAsync(key, bytes("nested"), WriteOptions.DEFAULT);
      }
      assertThat(valueSeenByAnotherThread(key)).isEmpty();
    }
    assertThat(stored.join()).isEqualTo(Outcome.OK);
    assertThat(valueSeenByAnotherThread(key)).hasValue("nested");
  }

  /**
   * A thread in a flight that reads replies runs the callbacks of other threads' requests; what those send must be
   * written at once, not held in the flight, or the other thread waits for as long as the flight stays open. The
   * callback runs in the flight's thread only if that thread read the reply (not the background reader), so the
   * test tries until it has seen that case.
   */
  @Test
  void whatAnotherThreadsCallbackSendsIsNotHeldInTheReadersFlight() throws Exception {
    String key = cluster.keyOn(0, "c");
    client.set(key, bytes("source"));
    int ranInFlight = 0;
    for (int attempt = 0; attempt < 200 && ranInFlight < 3; attempt++) {
      String derived = cluster.keyOn(0, "d" + attempt + "-");
      AtomicReference<Thread> callbackThread = new AtomicReference<>();
      CountDownLatch sent = new CountDownLatch(1);
      try (Flight flight = client.flight()) {
        Thread other =
            new Thread(
                () -> {
                  client
                      .getAsync(key)
                      .thenCompose(
                          found -> {
                            callbackThread.set(Thread.currentThread());
                            return client.setAsync(
                                derived, bytes("from-callback"), WriteOptions.DEFAULT);
                          });
                  sent.countDown();
                });
        other.start();
        assertThat(sent.await(10, TimeUnit.SECONDS)).isTrue();
        client.get(key); // reads the other thread's reply too: it was sent first
        if (callbackThread.get() != Thread.currentThread()) {
          continue; // the background reader got it first: not the case under test
        }
        ranInFlight++;
        // Still inside the flight: the callback's set reached the server anyway.
        assertThat(valueSeenByAnotherThread(derived, Duration.ofSeconds(10)))
            .hasValue("from-callback");
      }
    }
    assertThat(ranInFlight)
        .as("attempts in which this thread ran the other's callback")
        .isPositive();
  }

  @Test
  void requestsHeldWhenTheServerIsGoneFailInsteadOfHanging() {
    String key = cluster.keyOn(0, "gone");
    client.get(key);
    CompletableFuture<Outcome> stored;
    try (Flight flight = client.flight()) {
      stored = client.setAsync(key, bytes("lost"), WriteOptions.DEFAULT);
      cluster.servers.remove(0).close();
    }
    assertThatThrownBy(stored::join)
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(IqConnectionException.class);
  }

  @Test
  void onlyTheThreadThatOpenedAFlightMayCloseIt() throws Exception {
    Flight flight = client.flight();
    AtomicReference<Throwable> refused = new AtomicReference<>();
    Thread other =
        new Thread(
            () -> {
              try {
                flight.close();
              } catch (Throwable e) {
                refused.set(e);
              }
            });
    other.start();
    other.join();
    flight.close();
    assertThat(refused.get()).isInstanceOf(IllegalStateException.class);
  }

  private Optional<String> valueSeenByAnotherThread(String key) throws Exception {
    return valueSeenByAnotherThread(key, Duration.ZERO);
  }

  /** The value another thread (outside this one's flight) reads, polling up to {@code within} for one to appear. */
  private Optional<String> valueSeenByAnotherThread(String key, Duration within) throws Exception {
    AtomicReference<Optional<String>> seen = new AtomicReference<>();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread reader =
        new Thread(
            () -> {
              try {
                long deadline = System.nanoTime() + within.toNanos();
                Optional<String> value;
                do {
                  value = client.get(key).map(CacheValue::text);
                } while (value.isEmpty() && System.nanoTime() < deadline && sleep());
                seen.set(value);
              } catch (Throwable e) {
                failed.set(e);
              }
            });
    reader.start();
    reader.join();
    if (failed.get() != null) {
      throw new AssertionError("the other thread's read failed", failed.get());
    }
    return seen.get();
  }

  private static boolean sleep() {
    try {
      Thread.sleep(5);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
