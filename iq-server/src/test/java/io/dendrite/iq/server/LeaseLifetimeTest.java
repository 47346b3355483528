package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Leases of dead holders lapse after the configured lifetime; tokens never repeat across restarts. */
class LeaseLifetimeTest {

  @Test
  void aSilentHoldersLeaseExpiresAndTheNextReaderGetsOne() throws InterruptedException {
    // The holder stays connected: a closed connection's I leases go at once (HeldBoundsTest).
    // A second, not 200 ms: the lease must still hold at the reader's request on a busy machine.
    try (IqServer server =
            IqServer.start(
                IqServerConfig.builder().port(0).leaseLifetime(Duration.ofMillis(1_000)).build());
        TestConnection reader = new TestConnection(server.port());
        TestConnection holder = new TestConnection(server.port())) {
      TestConnection.markersReady(server.port());
      long token = TestConnection.token(holder.call("iqget k 0"));
      assertThat(reader.call("iqget k 0")).isEqualTo("LVALUE ls:k 0 0 3\nEND\n");
      Thread.sleep(1_200);
      long next = TestConnection.token(reader.call("iqget k 0"));
      assertThat(next).isNotIn(3L, token);
      assertThat(reader.call("stats settings")).contains("STAT lease_ms 1000\n");
      assertThat(reader.call("stats")).containsPattern("STAT leases_expired [1-9]");
    }
  }

  @Test
  void transactionRecordsLapseWithTheLease() throws InterruptedException {
    try (IqServer server =
            IqServer.start(
                IqServerConfig.builder().port(0).leaseLifetime(Duration.ofMillis(200)).build());
        TestConnection c = new TestConnection(server.port())) {
      c.call("set k 0 0 1\nv");
      assertThat(c.call("qareg k T")).isEqualTo("LEASE 1\n");
      Thread.sleep(400);
      assertThat(c.call("dar T")).isEqualTo("INVALID\n");
      assertThat(c.call("get k"))
          .as("qareg cut the stale value's TTL to the lease")
          .isEqualTo("END\n");
      assertThat(c.call("stats"))
          .contains("STAT curr_leases 0\n")
          .contains("STAT curr_transactions 0\n");
    }
  }

  /**
   * A writer that took Q-refresh or Q-incremental leases, wrote the data store and died before its {@code commit}
   * (issue 37): the values it quarantined are older than the data store, and once its leases lapse they go, as a
   * Q-inv lease's value does, so the next reader misses and reads the data store. A committed or released lease
   * leaves the value with its own expiry, and a pinned value (a buffered write, data the cache alone may hold)
   * stays.
   */
  @Test
  void aQuarantinedValueGoesWhenItsLeaseLapsesWithoutACommit() throws InterruptedException {
    // Two seconds, not 300 ms: the leases must hold through the ten round trips before the sleep,
    // which a busy machine can stretch past 300 ms.
    try (IqServer server =
            IqServer.start(
                IqServerConfig.builder().port(0).leaseLifetime(Duration.ofMillis(2_000)).build());
        TestConnection c = new TestConnection(server.port())) {
      for (String key : new String[] {"refreshed", "appended", "committed", "released", "sarred"}) {
        c.call("set " + key + " 0 0 3\nold");
      }
      c.call("set pinned 0 0 3 1\nold");
      assertThat(c.call("qaread refreshed 0 T1")).startsWith("LEASE refreshed ");
      assertThat(c.call("iqappend appended 3 T2\nnew")).startsWith("OK ");
      long committed = TestConnection.token(c.call("qaread committed 0 T3"));
      assertThat(c.call("swap committed 0 0 3 " + committed + "\nnew")).isEqualTo("STORED\n");
      assertThat(c.call("commit T3 0")).isEqualTo("OK\n");
      assertThat(c.call("qaread released 0 T4")).startsWith("LEASE released ");
      assertThat(c.call("release T4")).isEqualTo("OK\n");
      long sarred = TestConnection.token(c.call("qaread sarred 0"));
      assertThat(c.call("sar sarred 0 0 3 " + sarred + "\nnew")).isEqualTo("STORED\n");
      assertThat(c.call("qaread pinned 0 T5")).startsWith("LEASE pinned ");
      assertThat(c.call("get refreshed")).as("readable while quarantined").contains("old");

      Thread.sleep(2_200);

      assertThat(c.call("get refreshed")).as("went with its Q-ref lease").isEqualTo("END\n");
      assertThat(c.call("get appended")).as("went with its Q-inc lease").isEqualTo("END\n");
      assertThat(c.call("get committed")).contains("new");
      assertThat(c.call("get released")).as("released: its own expiry back").contains("old");
      assertThat(c.call("get sarred")).contains("new");
      assertThat(c.call("get pinned")).as("pinned values are data: kept").contains("old");
      assertThat(c.call("commit T1 0")).as("the lapsed writer's commit").isEqualTo("NOT_FOUND\n");
      assertThat(c.call("stats settings")).contains("STAT lapse_drops_value on\n");
    }
  }

  /** With {@code lapseDropsValue(false)} a lapsed Q-ref or Q-inc lease leaves the old value, as IQ-Twemcached does. */
  @Test
  void aServerToldToKeepTheValueOnALapseKeepsIt() throws InterruptedException {
    try (IqServer server =
            IqServer.start(
                IqServerConfig.builder()
                    .port(0)
                    .leaseLifetime(Duration.ofMillis(300))
                    .lapseDropsValue(false)
                    .build());
        TestConnection c = new TestConnection(server.port())) {
      c.call("set refreshed 0 0 3\nold");
      c.call("set appended 0 0 3\nold");
      assertThat(c.call("qaread refreshed 0 T1")).startsWith("LEASE refreshed ");
      assertThat(c.call("iqappend appended 3 T2\nnew")).startsWith("OK ");
      Thread.sleep(600);
      assertThat(c.call("get refreshed")).contains("old");
      assertThat(c.call("get appended")).contains("old");
      assertThat(c.call("stats settings")).contains("STAT lapse_drops_value off\n");
    }
  }

  /**
   * A client whose {@code qaread} timed out releases the transaction on a fresh connection; the server may read that
   * release before the request still queued on the closed connection. The late request must not take a lease that
   * nobody would release (it blocked every other writer of the key until it expired).
   */
  @Test
  void aRequestThatArrivesAfterItsTransactionWasReleasedTakesNoLease() {
    try (IqServer server =
            IqServer.start(
                IqServerConfig.builder().port(0).leaseLifetime(Duration.ofMillis(10_000)).build());
        TestConnection c = new TestConnection(server.port())) {
      TestConnection.markersReady(server.port());
      c.call("set k 0 0 1\nv");
      assertThat(c.call("release T")).isEqualTo("NOT_FOUND\n");

      assertThat(c.call("qaread k 0 T"))
          .as("refused like a hot miss")
          .startsWith("LVALUE k 0 0 3\n");
      assertThat(c.call("qareg k T")).isEqualTo("ABORT\n");
      assertThat(c.call("iqincr k 1 T")).isEqualTo("ABORT\n");
      assertThat(c.call("stats")).contains("STAT curr_leases 0\n");

      assertThat(c.call("qaread k 0 U"))
          .as("another transaction takes the key at once")
          .startsWith("LEASE k 0 0 ");
    }
  }

  /**
   * A server handing over before it stops says so in {@code stats} and grants no new Q lease on a pinned item (a
   * replica the clients are moving elsewhere), while unpinned keys are served as before.
   */
  @Test
  void aLeavingServerSaysSoAndGrantsNoLeaseOnAPinnedItem() throws Exception {
    try (IqServer server = IqServer.start(IqServerConfig.builder().port(0).build());
        TestConnection c = new TestConnection(server.port())) {
      assertThat(c.call("set pinned 0 0 1 1\nv")).isEqualTo("STORED\n");
      assertThat(c.call("set plain 0 0 1 0\nv")).isEqualTo("STORED\n");
      assertThat(c.call("stats")).contains("STAT leaving 0\n");

      Thread leaving =
          new Thread(
              () -> {
                try {
                  server.leave(java.time.Duration.ofSeconds(30));
                } catch (InterruptedException stopped) {
                  Thread.currentThread().interrupt();
                }
              });
      leaving.start();
      try {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!c.call("stats").contains("STAT leaving 1\n")) {
          assertThat(System.nanoTime()).as("stats says leaving").isLessThan(deadline);
          Thread.sleep(10);
        }
        assertThat(c.call("qaread pinned 0 T"))
            .as("refused like a hot miss")
            .startsWith("LVALUE pinned 0 0 3\n");
        assertThat(c.call("get pinned")).as("still readable").startsWith("VALUE pinned ");
        assertThat(c.call("qaread plain 0 U")).startsWith("LEASE plain ");
      } finally {
        leaving.interrupt();
        leaving.join();
      }
    }
  }

  @Test
  void tokensFromANewServerNeverEqualEarlierOnesAndCannotBeGuessedFromTheLast() {
    // Tokens were sequential: a client that saw one could end the next holder's lease by counting.
    Set<Long> earlier = new HashSet<>();
    for (int run = 0; run < 3; run++) {
      try (IqServer server = IqServer.start(IqServerConfig.builder().port(0).build());
          TestConnection c = new TestConnection(server.port())) {
        long previous = 0;
        for (int i = 0; i < 50; i++) {
          long token = TestConnection.token(c.call("iqget key" + i + " 0"));
          assertThat(earlier.add(token)).as("token %d repeated", token).isTrue();
          assertThat(token).as("positive, far above the hot-miss token 3").isGreaterThan(1L << 61);
          assertThat(Math.abs(token - previous))
              .as("%d does not follow from the token before it, %d", token, previous)
              .isGreaterThan(1L << 32);
          previous = token;
        }
      }
    }
  }
}
