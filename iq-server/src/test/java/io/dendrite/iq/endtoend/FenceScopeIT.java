package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.FenceScope;
import io.dendrite.iq.client.FencedOutException;
import io.dendrite.iq.client.Flight;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.WriteOptions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A sender guards its requests with a fence ({@link io.dendrite.iq.client.Fences#guard}); once a new owner has raised
 * the fence, every guarded request of the old one fails with {@link FencedOutException} and changes nothing,
 * whatever its reply shape, and the connection stays in step.
 */
class FenceScopeIT {
  private final IqServers cluster = new IqServers(2);
  private final IqClient client = cluster.client;

  @AfterEach
  void close() {
    cluster.close();
  }

  @Test
  void guardedRequestsRunAtTheFencesEpochAndAreFencedOutOnceANewOwnerRaisedIt() {
    String key = cluster.keyOn(1, "k");
    Map<ServerAddress, Long> raised = client.fences().raise("Fence:r", 1);
    assertThat(raised).hasSize(2).containsValues(1L, 1L);

    try (FenceScope owner = client.fences().guard("Fence:r", 1)) {
      assertThat(client.set(key, bytes("v1"))).isEqualTo(Outcome.OK);
      assertThat(client.get(key)).map(value -> new String(value.data())).contains("v1");
    }
    try (IqClient newOwner = IqClient.builder().servers(cluster.addresses()).build()) {
      assertThat(newOwner.fences().raise("Fence:r", 2)).containsValues(2L, 2L);
    }

    try (FenceScope old = client.fences().guard("Fence:r", 1)) {
      FencedOutException refused =
          (FencedOutException) catchIt(() -> client.set(key, bytes("stale")));
      assertThat(refused.fenceEpoch()).isEqualTo(2);
      assertThat(catchIt(() -> client.get(key))).isInstanceOf(FencedOutException.class);
      assertThat(catchIt(() -> client.read(key))).isInstanceOf(FencedOutException.class);
      // Pipelined, in one flight: each fenced out on its own, none shifted.
      CompletableFuture<Outcome> first;
      CompletableFuture<Outcome> second;
      try (Flight flight = client.flight()) {
        first = client.setAsync(key, bytes("a"), WriteOptions.DEFAULT);
        second = client.setAsync(key, bytes("b"), WriteOptions.DEFAULT);
      }
      for (CompletableFuture<Outcome> sent : List.of(first, second)) {
        assertThatThrownBy(sent::join).hasCauseInstanceOf(FencedOutException.class);
      }
    }
    assertThat(client.get(key))
        .as("outside the scope: unguarded, and nothing of the old owner's changed the value")
        .map(value -> new String(value.data()))
        .contains("v1");
  }

  @Test
  void aServerWithoutTheFenceRefusesGuardedRequests() {
    try (FenceScope scope = client.fences().guard("Fence:never-raised", 3)) {
      FencedOutException refused = (FencedOutException) catchIt(() -> client.set("x", bytes("v")));
      assertThat(refused.fenceEpoch()).isZero();
    }
    assertThat(client.get("x")).isEmpty();
  }

  private static Throwable catchIt(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      return e;
    }
    throw new AssertionError("no exception");
  }
}
