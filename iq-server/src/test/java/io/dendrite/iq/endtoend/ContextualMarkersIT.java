package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.RefreshLease;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.Transaction;
import io.dendrite.iq.server.Credentials;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * TARDIS's pending markers on a real server over loopback (Contextual, design §5.2): a marker is the server's own
 * state, kept whatever happens to the key's item, charged to the pinned memory and never dropped; lease holders
 * clear it; and a server that restarted answers "maybe pending" until it is told {@code pready}.
 */
class ContextualMarkersIT {

  /** A marker of a 10-character key, such as every key below that a test counts bytes of. */
  private static final long MARKER_BYTES = 10 + 64;

  private IqServers cluster;
  private IqClient client;
  private ServerAddress server;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private void start(UnaryOperator<IqServerConfig.Builder> settings) {
    start(client -> client, settings);
  }

  private void start(
      UnaryOperator<IqClient.Builder> clientSettings,
      UnaryOperator<IqServerConfig.Builder> serverSettings) {
    cluster = new IqServers(1, clientSettings, serverSettings);
    client = cluster.client;
    server = cluster.addresses().get(0);
  }

  /** A server whose markers are trusted already: it never restarted. */
  private void startReady(UnaryOperator<IqServerConfig.Builder> settings) {
    start(settings);
    client.pendingMarkers().ready(server);
  }

  @Test
  void aMarkerOutlivesDeleteSetDarAndFlushAll() throws IOException {
    startReady(config -> config);
    String key = "doc:000001";
    assertThat(client.pendingMarkers().mark(key)).isEqualTo(Outcome.OK);
    assertThat(leasePending(key)).isTrue();
    assertThat(leasePending("doc:000002")).as("an unmarked key").isFalse();

    client.set(key, bytes("v1"));
    assertThat(hit(key).pending()).as("a value set over the marker").isTrue();

    assertThat(client.delete(key)).isEqualTo(Outcome.OK);
    assertThat(leasePending(key)).as("after delete").isTrue();

    client.set(key, bytes("v2"));
    try (Transaction writeAround = client.beginTransaction()) {
      assertThat(writeAround.quarantine(key)).isEqualTo(Outcome.OK);
      assertThat(writeAround.deleteAndRelease()).isEqualTo(Outcome.OK);
    }
    assertThat(client.get(key)).isEmpty();
    assertThat(leasePending(key)).as("after dar").isTrue();

    client.set(key, bytes("v3"));
    assertThat(IqServers.lines(server, "flush_all\r\nget none\r\n", "END")).containsExactly("OK");
    assertThat(client.get(key)).isEmpty();
    assertThat(leasePending(key)).as("after flush_all").isTrue();
    assertThat(stat("pending_markers")).isEqualTo(1);
  }

  @Test
  void aMarkerOutlivesTheEvictionOfItsItem() throws IOException {
    startReady(config -> config.memoryBytes(64 << 10));
    String key = "doc:000001";
    client.set(key, bytes("cached"));
    assertThat(client.pendingMarkers().mark(key)).isEqualTo(Outcome.OK);

    // Five times what the cache holds per round; the key is read once a round only, since reads
    // make Caffeine
    // keep it.
    byte[] filler = new byte[1024];
    for (int round = 0; client.get(key).isPresent(); round++) {
      assertThat(round).as("rounds it took to evict the key").isLessThan(50);
      for (int i = 0; i < 300; i++) {
        client.set("filler:" + round + ":" + i, filler);
      }
    }

    assertThat(stat("evictions")).isPositive();
    assertThat(leasePending(key)).isTrue();
    assertThat(stat("pending_markers")).isEqualTo(1);
  }

  @Test
  void commitZeroAndAFillClearTheMarkerOnlyWhileTheyHoldTheLease() throws IOException {
    startReady(config -> config);
    for (String key : List.of("doc:refrsh", "doc:filled", "doc:voided", "doc:releas")) {
      assertThat(client.pendingMarkers().mark(key)).isEqualTo(Outcome.OK);
    }

    Transaction refresh = client.beginTransaction();
    RefreshLease refreshed = granted(refresh.readForUpdate("doc:refrsh"));
    assertThat(refreshed.pending()).isTrue();
    assertThat(refreshed.swap(bytes("recovered"))).isEqualTo(Outcome.OK);
    assertThat(refresh.commit(false)).isEqualTo(Outcome.OK);
    assertThat(hit("doc:refrsh").text()).isEqualTo("recovered");
    assertThat(hit("doc:refrsh").pending()).isFalse();

    LeaseHandle fill = leased(client.read("doc:filled"));
    assertThat(fill.pending()).isTrue();
    assertThat(fill.fill(bytes("recovered"))).isEqualTo(Outcome.OK);
    assertThat(hit("doc:filled").pending()).isFalse();

    // A holder whose lease was voided cannot prove it recovered anything: another writer may have
    // marked the key
    // since. Its commit leaves the marker.
    Transaction voided = client.beginTransaction();
    granted(voided.readForUpdate("doc:voided"));
    client.delete("doc:voided");
    assertThat(voided.commit(false)).isEqualTo(Outcome.OK);
    assertThat(leasePending("doc:voided")).isTrue();

    Transaction released = client.beginTransaction();
    granted(released.readForUpdate("doc:releas"));
    assertThat(released.release()).isEqualTo(Outcome.OK);
    assertThat(leasePending("doc:releas")).isTrue();

    // commit 1 sets a marker, whatever happens to the value
    Transaction teleport = client.beginTransaction();
    RefreshLease teleported = granted(teleport.readForUpdate("doc:telept"));
    assertThat(teleported.pending()).isFalse();
    assertThat(teleported.swap(bytes("refreshed"))).isEqualTo(Outcome.OK);
    assertThat(teleport.commit(true)).isEqualTo(Outcome.OK);
    assertThat(hit("doc:telept").pending()).isTrue();

    assertThat(stat("pending_markers")).isEqualTo(3);
    assertThat(stat("pending_marker_bytes")).isEqualTo(3 * MARKER_BYTES);
  }

  @Test
  void pmarkPastThePinnedBudgetIsRefusedWithNothingElseChanged() throws IOException {
    startReady(config -> config.pinnedMemoryBytes(3 * MARKER_BYTES));
    for (int i = 1; i <= 3; i++) {
      assertThat(client.pendingMarkers().mark("doc:00000" + i)).isEqualTo(Outcome.OK);
    }
    client.set("doc:000004", bytes("cached"));
    Map<String, String> before = IqServers.stats(server);

    assertThat(client.pendingMarkers().mark("doc:000004")).isEqualTo(Outcome.PINNED_MEMORY_FULL);

    Map<String, String> after = IqServers.stats(server);
    for (String name :
        List.of("pending_markers", "pending_marker_bytes", "curr_items", "pinned_bytes")) {
      assertThat(after.get(name)).as(name).isEqualTo(before.get(name));
    }
    assertThat(after.get("pending_marker_bytes")).isEqualTo(String.valueOf(3 * MARKER_BYTES));
    assertThat(hit("doc:000004").pending()).isFalse();
    assertThat(hit("doc:000004").text()).isEqualTo("cached");
    assertThat(client.setPinned("bw:1", bytes("x")))
        .as("markers and pinned items share the budget")
        .isEqualTo(Outcome.PINNED_MEMORY_FULL);

    LeaseHandle recovered = leased(client.read("doc:000001"));
    assertThat(recovered.fill(bytes("v"))).isEqualTo(Outcome.OK);
    assertThat(client.pendingMarkers().mark("doc:000004"))
        .as("a cleared marker made room")
        .isEqualTo(Outcome.OK);
    assertThat(leasePending("doc:000002")).as("no marker was dropped for it").isTrue();
  }

  @Test
  void commitOneSetsEveryMarkerOrNoneAndKeepsTheTransactionWhenTheyDoNotFit() throws Exception {
    startReady(config -> config.pinnedMemoryBytes(2 * MARKER_BYTES));
    client.set("doc:000002", bytes("old2"));
    client.set("doc:000003", bytes("old3"));
    assertThat(client.pendingMarkers().mark("doc:000001")).isEqualTo(Outcome.OK);

    Transaction tx = client.beginTransaction();
    assertThat(granted(tx.readForUpdate("doc:000002")).swap(bytes("new2"))).isEqualTo(Outcome.OK);
    assertThat(granted(tx.readForUpdate("doc:000003")).swap(bytes("new3"))).isEqualTo(Outcome.OK);
    assertThat(tx.commit(true))
        .as("two new markers, room for one")
        .isEqualTo(Outcome.PINNED_MEMORY_FULL);

    assertThat(hit("doc:000002").text()).isEqualTo("old2");
    assertThat(hit("doc:000003").text()).isEqualTo("old3");
    assertThat(hit("doc:000002").pending()).isFalse();
    assertThat(stat("pending_markers")).isEqualTo(1);
    assertThat(stat("curr_transactions")).as("the transaction stays").isEqualTo(1);
    try (Transaction other = client.beginTransaction()) {
      assertThat(other.readForUpdateOnce("doc:000002").get())
          .as("its leases are still held")
          .isInstanceOf(ReadResult.Busy.class);
    }

    assertThat(leased(client.read("doc:000001")).fill(bytes("v"))).isEqualTo(Outcome.OK);
    assertThat(IqServers.lines(server, "commit " + tx.id() + " 1\r\nget none\r\n", "END"))
        .as("the same commit, once the markers fit")
        .containsExactly("OK");
    assertThat(hit("doc:000002").text()).isEqualTo("new2");
    assertThat(hit("doc:000003").text()).isEqualTo("new3");
    assertThat(hit("doc:000002").pending()).isTrue();
    assertThat(hit("doc:000003").pending()).isTrue();
    assertThat(stat("pending_marker_bytes")).isEqualTo(2 * MARKER_BYTES);
  }

  @Test
  void aServerSaysPendingForEveryKeyUntilPreadyAgainAfterARestart() throws IOException {
    start(config -> config);
    assertThat(IqServers.settings(server).get("pready_gate")).isEqualTo("on");
    assertThat(stat("pending_markers_ready")).isZero();
    assertThat(leasePending("doc:000001")).as("a fresh server cannot know").isTrue();
    Transaction tx = client.beginTransaction();
    assertThat(granted(tx.readForUpdate("doc:000002")).pending()).isTrue();
    tx.release();

    client.pendingMarkers().ready(server);

    assertThat(stat("pending_markers_ready")).isEqualTo(1);
    assertThat(leasePending("doc:000001")).isFalse();
    assertThat(client.pendingMarkers().mark("doc:000003")).isEqualTo(Outcome.OK);
    assertThat(leasePending("doc:000003")).isTrue();

    restart(config -> config);

    assertThat(stat("pending_markers")).as("the restart lost the marker").isZero();
    assertThat(leasePending("doc:000003")).as("so the server says maybe").isTrue();
    assertThat(leasePending("doc:000001")).isTrue();
    assertThat(stat("pending_markers_ready")).isZero();
  }

  /** The negative control: what the gate prevents. */
  @Test
  void withoutTheGateARestartedServerSaysNotPendingForAKeyWhoseMarkerItLost() throws IOException {
    start(config -> config.preadyGate(false));
    assertThat(IqServers.settings(server).get("pready_gate")).isEqualTo("off");
    assertThat(stat("pending_markers_ready")).isEqualTo(1);
    assertThat(client.pendingMarkers().mark("doc:000003")).isEqualTo(Outcome.OK);
    assertThat(leasePending("doc:000003")).isTrue();

    restart(config -> config.preadyGate(false));

    assertThat(leasePending("doc:000003"))
        .as("a reader would now fill the key from a data store that lacks its buffered write")
        .isFalse();
  }

  @Test
  void malformedPmarkAndPreadyLinesGetAClientErrorAndChangeNothing() throws IOException {
    start(config -> config);
    String tooLong = "k".repeat(251);
    List<String> replies =
        IqServers.lines(
            server,
            "pmark\r\npmark a b\r\npmark "
                + tooLong
                + "\r\npready now\r\npmark ok noreply\r\npready noreply\r\nget nothing\r\n",
            "END");

    assertThat(replies)
        .containsExactly(
            "CLIENT_ERROR bad command line format",
            "CLIENT_ERROR bad command line format",
            "CLIENT_ERROR key too long",
            "CLIENT_ERROR bad command line format");
    assertThat(stat("pending_markers")).as("only the well-formed one").isEqualTo(1);
    assertThat(stat("pending_markers_ready")).isEqualTo(1);
    assertThat(leasePending("ok")).isTrue();
    assertThat(leasePending("a")).isFalse();
  }

  /** Markers take pinned memory, and a wrong one sends readers to a stale data store: only pin users set them. */
  @Test
  void onlyPinUsersSetMarkersDeclareThemReadyOrClearThem() throws IOException {
    UnaryOperator<IqServerConfig.Builder> logins =
        config ->
            config
                .credentials(Credentials.of(Map.of("app", "s3cret", "ops", "0ps")))
                .pinUsers(Set.of("app"));
    start(client -> client.login("app", "s3cret"), logins);
    try (IqClient ops =
        IqClient.builder()
            .servers(List.of(server))
            .login("ops", "0ps")
            .requestTimeout(Duration.ofSeconds(5))
            .build()) {
      assertThatThrownBy(() -> ops.pendingMarkers().mark("doc:000001"))
          .isInstanceOf(IqException.class)
          .hasMessageContaining("user ops may not pin items");
      assertThatThrownBy(() -> ops.pendingMarkers().ready(server))
          .isInstanceOf(IqException.class)
          .hasMessageContaining("user ops may not pin items");
      assertThat(leasePending("doc:000002")).as("the gate is still closed").isTrue();

      client.pendingMarkers().ready(server);
      assertThat(client.pendingMarkers().mark("doc:000001")).isEqualTo(Outcome.OK);
      LeaseHandle opsFill = leased(ops.read("doc:000001"));
      assertThat(opsFill.pending()).isTrue();
      assertThat(opsFill.fill(bytes("v"))).isEqualTo(Outcome.OK);
      assertThat(hit("doc:000001").pending()).as("another user's fill leaves it").isTrue();

      Transaction opsTx = ops.beginTransaction();
      granted(opsTx.readForUpdate("doc:000002"));
      assertThatThrownBy(() -> opsTx.commit(true))
          .isInstanceOf(IqException.class)
          .hasMessageContaining("user ops may not pin items");
      assertThat(client.servers().stats(server).get("pending_markers")).isEqualTo("1");
    }
  }

  // ---------------------------------------------------------------- helpers

  private void restart(UnaryOperator<IqServerConfig.Builder> settings) {
    IqServer old = cluster.servers.get(0);
    int port = old.port();
    old.close();
    cluster.servers.set(
        0,
        IqServer.start(
            settings
                .apply(IqServerConfig.builder().port(port).leaseLifetime(Duration.ofMillis(10_000)))
                .build()));
  }

  /** Takes the key's I lease, gives it up, and says whether it was granted pending. */
  private boolean leasePending(String key) {
    try (LeaseHandle lease = leased(client.read(key))) {
      return lease.pending();
    }
  }

  private CacheValue hit(String key) {
    ReadResult read = client.read(key);
    assertThat(read).isInstanceOf(ReadResult.Hit.class);
    return ((ReadResult.Hit) read).value();
  }

  private static LeaseHandle leased(ReadResult read) {
    assertThat(read).isInstanceOf(ReadResult.Leased.class);
    return ((ReadResult.Leased) read).lease();
  }

  private static RefreshLease granted(RefreshResult result) {
    assertThat(result).isInstanceOf(RefreshResult.Granted.class);
    return ((RefreshResult.Granted) result).lease();
  }

  private long stat(String name) throws IOException {
    return Long.parseLong(IqServers.stats(server).get(name));
  }
}
