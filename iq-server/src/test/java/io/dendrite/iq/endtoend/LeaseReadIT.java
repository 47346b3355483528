package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.Backoff;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.Transaction;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LeaseReadIT {

  private static final Backoff SHORT =
      new Backoff(Duration.ofMillis(1), Duration.ofMillis(20), Duration.ofMillis(400), 0.5);

  private final IqServers cluster =
      new IqServers(2, client -> client.backoff(SHORT), server -> server);
  private final IqClient client = cluster.client;

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void missGrantsALeaseWhoseFillIsThenRead() {
    ReadResult miss = client.read("user:1");
    assertThat(miss).isInstanceOf(ReadResult.Leased.class);
    try (LeaseHandle lease = ((ReadResult.Leased) miss).lease()) {
      assertThat(lease.key()).isEqualTo("user:1");
      assertThat(lease.server())
          .isEqualTo(client.replicaPlacement().serversFor("user:1", 1).get(0));
      assertThat(lease.fill(bytes("alice"))).isEqualTo(Outcome.OK);
    }
    ReadResult hit = client.read("user:1");
    assertThat(hit).isInstanceOf(ReadResult.Hit.class);
    assertThat(((ReadResult.Hit) hit).value().text()).isEqualTo("alice");
  }

  @Test
  void closingAnUnfilledLeaseLetsTheNextReaderLeaseImmediately() {
    ((ReadResult.Leased) client.read("k")).lease().close();
    assertThat(client.read("k")).isInstanceOf(ReadResult.Leased.class);
  }

  @Test
  void hotMissBacksOffUntilTheHolderFills() throws Exception {
    LeaseHandle holder = ((ReadResult.Leased) client.read("hot")).lease();
    try (IqClient other =
        IqClient.builder()
            .servers(cluster.addresses())
            .backoff(
                new Backoff(
                    Duration.ofMillis(1), Duration.ofMillis(20), Duration.ofSeconds(5), 0.5))
            .build()) {
      CompletableFuture<ReadResult> waiting =
          CompletableFuture.supplyAsync(() -> other.read("hot"));
      Thread.sleep(150);
      assertThat(waiting).isNotDone();
      assertThat(holder.fill(bytes("filled"))).isEqualTo(Outcome.OK);
      ReadResult result = waiting.get(5, TimeUnit.SECONDS);
      assertThat(result).isInstanceOf(ReadResult.Hit.class);
      assertThat(((ReadResult.Hit) result).value().text()).isEqualTo("filled");
    }
  }

  @Test
  void aLeaseHeldForeverEndsInBusyAtTheDeadline() {
    LeaseHandle holder = ((ReadResult.Leased) client.read("stuck")).lease();
    long start = System.nanoTime();
    ReadResult result = client.read("stuck");
    long tookMillis = (System.nanoTime() - start) / 1_000_000;

    assertThat(result).isInstanceOf(ReadResult.Busy.class);
    assertThat(((ReadResult.Busy) result).waited()).isGreaterThanOrEqualTo(SHORT.deadline());
    assertThat(tookMillis).isBetween(400L, 2_000L);
    holder.close();
  }

  @Test
  void aWriterVoidsTheReadersLeaseSoItsStaleFillIsRefused() {
    LeaseHandle reader = ((ReadResult.Leased) client.read("row:7")).lease();
    try (Transaction writer = client.beginTransaction()) {
      assertThat(writer.quarantine("row:7")).isEqualTo(Outcome.OK);
      assertThat(reader.fill(bytes("stale"))).isEqualTo(Outcome.NOT_STORED);
      assertThat(writer.deleteAndRelease()).isEqualTo(Outcome.OK);
    }
    assertThat(client.get("row:7")).isEmpty();
  }
}
