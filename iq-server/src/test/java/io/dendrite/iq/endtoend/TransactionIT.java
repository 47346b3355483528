package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.Backoff;
import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.RefreshLease;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import io.dendrite.iq.client.WriteOptions;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TransactionIT {

  private static final Backoff SHORT =
      new Backoff(Duration.ofMillis(1), Duration.ofMillis(20), Duration.ofMillis(300), 0.5);

  private final IqServers cluster =
      new IqServers(3, client -> client.backoff(SHORT), server -> server);
  private final IqClient client = cluster.client;

  @AfterEach
  void stop() {
    cluster.close();
  }

  private static String text(java.util.Optional<CacheValue> value) {
    return value.map(CacheValue::text).orElse(null);
  }

  @Test
  void writeAroundQuarantinesKeysOnThreeServersAndDeletesThemAll() {
    List<String> keys =
        List.of(cluster.keyOn(0, "wa"), cluster.keyOn(1, "wa"), cluster.keyOn(2, "wa"));
    keys.forEach(key -> client.set(key, bytes("old")));

    try (Transaction tx = client.beginTransaction()) {
      keys.forEach(key -> assertThat(tx.quarantine(key)).isEqualTo(Outcome.OK));
      assertThat(tx.servers()).containsExactlyInAnyOrderElementsOf(cluster.addresses());
      keys.forEach(
          key ->
              assertThat(text(client.get(key))).as("readers keep the old value").isEqualTo("old"));
      assertThat(client.read(keys.get(0))).isInstanceOf(ReadResult.Hit.class);

      assertThat(tx.deleteAndRelease()).isEqualTo(Outcome.OK);
    }
    keys.forEach(key -> assertThat(client.get(key)).isEmpty());
    assertThat(client.read(keys.get(1)))
        .as("leases are released: the next reader may fill")
        .isInstanceOf(ReadResult.Leased.class);
  }

  @Test
  void pipelinedRefreshesAreRefusedAtOnceWhenHeldAndStageUntilCommit() {
    List<String> keys =
        List.of(cluster.keyOn(0, "p"), cluster.keyOn(1, "p"), cluster.keyOn(2, "p"));
    keys.forEach(key -> client.set(key, bytes("old " + key)));
    try (Transaction holder = client.beginTransaction()) {
      assertThat(holder.readForUpdate(keys.get(2))).isInstanceOf(RefreshResult.Granted.class);
      try (Transaction probe = client.beginTransaction()) {
        assertThat(probe.readForUpdateOnce(keys.get(2)).join())
            .as("held by another writer: refused at once")
            .isInstanceOf(ReadResult.Busy.class);
      }
      try (Transaction tx = client.beginTransaction()) {
        List<RefreshResult> results =
            keys.subList(0, 2).stream().map(tx::readForUpdateOnce).toList().stream()
                .map(java.util.concurrent.CompletableFuture::join)
                .toList();
        assertThat(results)
            .allSatisfy(result -> assertThat(result).isInstanceOf(RefreshResult.Granted.class));

        List<java.util.concurrent.CompletableFuture<Outcome>> swaps =
            results.stream()
                .map(result -> ((RefreshResult.Granted) result).lease())
                .map(lease -> lease.swapAsync(bytes("new " + lease.key()), WriteOptions.DEFAULT))
                .toList();
        assertThat(swaps)
            .extracting(java.util.concurrent.CompletableFuture::join)
            .containsOnly(Outcome.OK);
        assertThat(text(client.get(keys.get(0))))
            .as("staged, not visible")
            .isEqualTo("old " + keys.get(0));
        assertThat(tx.commit()).isEqualTo(Outcome.OK);
      }
    }
    assertThat(text(client.get(keys.get(0)))).isEqualTo("new " + keys.get(0));
    assertThat(text(client.get(keys.get(1)))).isEqualTo("new " + keys.get(1));
    assertThat(text(client.get(keys.get(2)))).isEqualTo("old " + keys.get(2));
  }

  @Test
  void refreshStagesTheNewValueUntilCommit() {
    client.set("r1", bytes("one"));
    try (Transaction tx = client.beginTransaction()) {
      RefreshResult result = tx.readForUpdate("r1");
      assertThat(result).isInstanceOf(RefreshResult.Granted.class);
      RefreshLease lease = ((RefreshResult.Granted) result).lease();
      assertThat(lease.current().map(CacheValue::text)).hasValue("one");
      assertThat(lease.swap(bytes("two"))).isEqualTo(Outcome.OK);
      assertThat(text(client.get("r1"))).isEqualTo("one");

      try (Transaction rival = client.beginTransaction()) {
        assertThat(rival.readForUpdate("r1"))
            .as("Q-refresh is exclusive")
            .isInstanceOf(ReadResult.Busy.class);
      }
      assertThat(tx.commit()).isEqualTo(Outcome.OK);
    }
    assertThat(text(client.get("r1"))).isEqualTo("two");
  }

  @Test
  void releaseDiscardsTheStagedValue() {
    client.set("r2", bytes("keep"));
    Transaction tx = client.beginTransaction();
    RefreshLease lease = ((RefreshResult.Granted) tx.readForUpdate("r2")).lease();
    lease.swap(bytes("drop"));
    tx.close();
    assertThat(text(client.get("r2"))).isEqualTo("keep");
  }

  @Test
  void incrementalChangesApplyAtCommitAndConflictingTransactionsAbort() {
    client.set("c1", bytes("abc"));
    client.set("n1", bytes("5"));
    try (Transaction tx = client.beginTransaction()) {
      assertThat(tx.append("c1", bytes("def"))).isEqualTo(Outcome.OK);
      assertThat(tx.append("c1", bytes("ghi"))).isEqualTo(Outcome.OK);
      assertThat(tx.incr("n1", 4)).isEqualTo(Outcome.OK);
      assertThat(text(client.get("c1"))).isEqualTo("abc");
      assertThat(tx.read("c1"))
          .as("a transaction reads its own staged value")
          .isInstanceOfSatisfying(
              ReadResult.Hit.class, hit -> assertThat(hit.value().text()).isEqualTo("abcdefghi"));
      try (Transaction rival = client.beginTransaction()) {
        assertThat(rival.append("c1", bytes("Z"))).isEqualTo(Outcome.ABORTED);
      }
      assertThat(tx.commit()).isEqualTo(Outcome.OK);
    }
    assertThat(text(client.get("c1"))).isEqualTo("abcdefghi");
    assertThat(text(client.get("n1"))).isEqualTo("9");
  }

  @Test
  void aServerRestartedMidTransactionMakesCommitReportStateLost() {
    String key = cluster.keyOn(1, "restart");
    client.set(key, bytes("v1"));
    Transaction tx = client.beginTransaction();
    RefreshLease lease = ((RefreshResult.Granted) tx.readForUpdate(key)).lease();
    assertThat(lease.swap(bytes("v2"))).isEqualTo(Outcome.OK);

    IqServer old = cluster.servers.get(1);
    int port = old.port();
    old.close();
    cluster.servers.set(
        1,
        IqServer.start(
            IqServerConfig.builder().port(port).leaseLifetime(Duration.ofMillis(10_000)).build()));

    assertThat(tx.commit()).isEqualTo(Outcome.STATE_LOST);
    assertThat(client.get(key)).as("the new server is usable").isEmpty();
  }

  @Test
  void aLeaseFromBeforeARestartIsNeverUsedAfterIt() {
    String key = cluster.keyOn(2, "fill");
    LeaseHandle lease = ((ReadResult.Leased) client.read(key)).lease();
    IqServer old = cluster.servers.get(2);
    int port = old.port();
    old.close();
    cluster.servers.set(
        2,
        IqServer.start(
            IqServerConfig.builder().port(port).leaseLifetime(Duration.ofMillis(10_000)).build()));
    // The new server hands out the same token numbers; the old handle must not fill its lease.
    ReadResult fresh = client.read(key);
    assertThat(fresh).isInstanceOf(ReadResult.Leased.class);

    assertThat(lease.fill(bytes("stale"))).isEqualTo(Outcome.STATE_LOST);
    assertThat(client.get(key)).isEmpty();
  }
}
