package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Forwarding between processes over loopback: results, every refusal, and a bad peer. */
class ForwardingTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final ForwardingSecurity SECURITY =
      ForwardingSecurity.sharedSecret(text("the service's test-only secret"));

  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final Set<String> owned = java.util.concurrent.ConcurrentHashMap.newKeySet();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private ForwardingServer server(int threads, int maxQueued) {
    ForwardingServer server =
        ForwardingServer.builder()
            .ownership((range, epoch) -> owned.contains(range + "@" + epoch))
            .security(SECURITY)
            .threads(threads)
            .maxQueued(maxQueued)
            .start();
    toClose.add(server);
    return server;
  }

  private ForwardingClient client() {
    return client(SECURITY);
  }

  private ForwardingClient client(ForwardingSecurity security) {
    ForwardingClient client = new ForwardingClient(security);
    toClose.add(client);
    return client;
  }

  private static ForwardingException failure(CompletableFuture<byte[]> call) {
    try {
      call.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return (ForwardingException) e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("the call succeeded");
  }

  private static byte[] text(String value) {
    return value.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void theOwnerRunsTheNamedOperationAndAnswers() throws Exception {
    ForwardingServer server = server(2, 128);
    server.register("upper", (range, body) -> text(range + ":" + new String(body).toUpperCase()));
    owned.add("r1@7");
    ForwardingClient client = client();

    List<CompletableFuture<byte[]>> calls = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      calls.add(client.call(server.endpoint(), "upper", "r1", 7, text("row " + i), TIMEOUT));
    }
    for (int i = 0; i < 100; i++) {
      assertThat(new String(calls.get(i).get(30, TimeUnit.SECONDS))).isEqualTo("r1:ROW " + i);
    }
  }

  @Test
  void aProcessThatDoesNotOwnTheRangeUnderThatEpochRefusesWithoutRunning() {
    ForwardingServer server = server(1, 4);
    int[] runs = {0};
    server.register("op", (range, body) -> text("ran " + ++runs[0]));
    owned.add("r1@8");
    ForwardingClient client = client();

    ForwardingException stale =
        failure(client.call(server.endpoint(), "op", "r1", 7, text(""), TIMEOUT));
    assertThat(stale.reason()).isEqualTo(ForwardingException.Reason.NOT_OWNER);
    assertThat(stale.retryAtNewOwner()).isTrue();
    assertThat(failure(client.call(server.endpoint(), "op", "r2", 8, text(""), TIMEOUT)).reason())
        .isEqualTo(ForwardingException.Reason.NOT_OWNER);
    assertThat(runs[0]).isZero();
  }

  @Test
  void unknownOperationsAndFailuresComeBackAsSuch() {
    ForwardingServer server = server(1, 4);
    server.register(
        "boom",
        (range, body) -> {
          throw new IllegalStateException("the owner's own failure");
        });
    owned.add("r@1");
    ForwardingClient client = client();

    ForwardingException unknown =
        failure(client.call(server.endpoint(), "nope", "r", 1, text(""), TIMEOUT));
    assertThat(unknown.reason()).isEqualTo(ForwardingException.Reason.UNKNOWN_OPERATION);
    ForwardingException failed =
        failure(client.call(server.endpoint(), "boom", "r", 1, text(""), TIMEOUT));
    assertThat(failed.reason()).isEqualTo(ForwardingException.Reason.FAILED);
    assertThat(failed).hasMessageContaining("the owner's own failure");
    assertThat(failed.retryAtNewOwner()).isFalse();
  }

  @Test
  void aFullQueueIsRefusedAsBusyAndAWaitPastTheDeadlineIsNotRun() throws Exception {
    ForwardingServer server = server(1, 1);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger runs =
        new java.util.concurrent.atomic.AtomicInteger();
    server.register(
        "slow",
        (range, body) -> {
          runs.incrementAndGet();
          entered.countDown();
          release.await(30, TimeUnit.SECONDS);
          return text("done");
        });
    owned.add("r@1");
    ForwardingClient client = client();

    CompletableFuture<byte[]> running =
        client.call(server.endpoint(), "slow", "r", 1, text(""), TIMEOUT);
    assertThat(entered.await(10, TimeUnit.SECONDS)).as("it occupies the one thread").isTrue();
    // One connection: the server reads these in order, so the first takes the one queue slot.
    CompletableFuture<byte[]> queued =
        client.call(server.endpoint(), "slow", "r", 1, text(""), Duration.ofMillis(300));
    ForwardingException busy =
        failure(client.call(server.endpoint(), "slow", "r", 1, text(""), TIMEOUT));
    assertThat(busy.reason()).isEqualTo(ForwardingException.Reason.BUSY);
    // The server read the queued request before the refused one, so its deadline there (300 ms
    // from when it arrived) has passed 300 ms after the refusal came back.
    long queuedDeadlinePassed = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);

    assertThat(failure(queued).reason())
        .as("no reply within the caller's 300 ms")
        .isEqualTo(ForwardingException.Reason.TIMED_OUT);
    while (System.nanoTime() - queuedDeadlinePassed < 0) {
      Thread.sleep(10);
    }
    release.countDown();
    assertThat(new String(running.get(30, TimeUnit.SECONDS))).isEqualTo("done");
    // Behind the queued request: once this has run, the queued one has been taken and dropped.
    assertThat(new String(client.call(server.endpoint(), "slow", "r", 1, text(""), TIMEOUT).get()))
        .isEqualTo("done");
    assertThat(runs.get()).as("the queued request waited past its deadline: not run").isEqualTo(2);
  }

  @Test
  void aGoneOwnerFailsOutstandingAsLostAndNewCallsAsUnreachable() throws Exception {
    ForwardingServer server = server(1, 4);
    CountDownLatch entered = new CountDownLatch(1);
    server.register(
        "hang",
        (range, body) -> {
          entered.countDown();
          Thread.sleep(30_000);
          return text("never");
        });
    owned.add("r@1");
    ForwardingClient client = client();
    String endpoint = server.endpoint();

    CompletableFuture<byte[]> outstanding =
        client.call(endpoint, "hang", "r", 1, text(""), TIMEOUT);
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    server.close();
    ForwardingException dropped = failure(outstanding);
    // It was running: retrying it elsewhere could run it twice.
    assertThat(dropped.reason()).isEqualTo(ForwardingException.Reason.CONNECTION_LOST);
    assertThat(dropped.retryAtNewOwner()).isFalse();
    ForwardingException refused = failure(client.call(endpoint, "hang", "r", 1, text(""), TIMEOUT));
    assertThat(refused.reason()).isEqualTo(ForwardingException.Reason.OWNER_UNREACHABLE);
    assertThat(refused.retryAtNewOwner()).isTrue();
  }

  @Test
  void aPeerSendingGarbageIsCutOffAndOthersAreStillServed() throws Exception {
    ForwardingServer server = server(1, 4);
    server.register("echo", (range, body) -> body);
    owned.add("r@1");
    try (Socket rogue = new Socket("127.0.0.1", server.port())) {
      OutputStream out = rogue.getOutputStream();
      out.write(new byte[] {0, 0, 0, 5, 'X', 1, 2, 3, 4}); // a frame that is no request
      out.write(new byte[] {0x7f, 0, 0, 0}); // a length far past the frame limit
      out.flush();
      rogue.setSoTimeout(10_000);
      // The challenge, then the refusal; then the server closes the connection.
      assertThat(new String(rogue.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1))
          .as("the server refused and closed the connection")
          .contains("before the handshake");
    }
    ForwardingClient client = client();
    assertThat(
            new String(client.call(server.endpoint(), "echo", "r", 1, text("ok"), TIMEOUT).get()))
        .isEqualTo("ok");
    assertThatThrownBy(() -> server.register("echo", (range, body) -> body))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aClientWithAnotherSecretIsRefusedAndNothingRuns() {
    ForwardingServer server = server(1, 4);
    int[] runs = {0};
    server.register("op", (range, body) -> text("ran " + ++runs[0]));
    owned.add("r@1");
    ForwardingClient stranger =
        client(ForwardingSecurity.sharedSecret(text("a guess, not the secret")));

    ForwardingException refused =
        failure(stranger.call(server.endpoint(), "op", "r", 1, text(""), TIMEOUT));

    assertThat(refused.reason()).isEqualTo(ForwardingException.Reason.NOT_AUTHENTICATED);
    assertThat(refused.retryAtNewOwner()).isFalse();
    assertThat(refused)
        .hasMessageContaining("wrong forwarding secret")
        .hasMessageContaining("ManyProcesses.forwardingSecurity");
    assertThat(runs[0]).isZero();
  }

  @Test
  void aRequestSentBeforeTheHandshakeIsRefusedAndNothingRuns() throws Exception {
    ForwardingServer server = server(1, 4);
    int[] runs = {0};
    server.register("op", (range, body) -> text("ran " + ++runs[0]));
    owned.add("r@1");
    io.netty.buffer.ByteBuf frame = io.netty.buffer.Unpooled.buffer();
    ForwardingFrames.writeRequest(
        frame, new ForwardingFrames.Request(1, 5_000, "op", "r", 1, text("")));
    byte[] request = new byte[frame.readableBytes()];
    frame.readBytes(request);

    try (Socket stranger = new Socket("127.0.0.1", server.port())) {
      stranger.setSoTimeout(10_000);
      java.io.DataOutputStream out = new java.io.DataOutputStream(stranger.getOutputStream());
      out.writeInt(request.length);
      out.write(request);
      out.flush();
      String answer =
          new String(stranger.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertThat(answer)
          .as("refused, then closed")
          .contains("a forwarded request before the handshake: nothing ran")
          .contains("forwardingSecurity");
    }
    assertThat(runs[0]).isZero();
  }

  @Test
  void withoutASecretOnOneSideNeitherSideTalksAndTheRefusalNamesTheSetting() {
    ForwardingServer secured = server(1, 4);
    secured.register("op", (range, body) -> text("ran"));
    owned.add("r@1");
    ForwardingSecurity none = ForwardingSecurity.unauthenticatedOnLoopback();

    ForwardingException noSecret =
        failure(client(none).call(secured.endpoint(), "op", "r", 1, text(""), TIMEOUT));
    assertThat(noSecret.reason()).isEqualTo(ForwardingException.Reason.NOT_AUTHENTICATED);
    assertThat(noSecret)
        .hasMessageContaining("requires the forwarding secret and this process has none")
        .hasMessageContaining("forwardingSecurity");

    ForwardingServer open =
        ForwardingServer.builder().ownership((range, epoch) -> true).security(none).start();
    toClose.add(open);
    open.register("op", (range, body) -> text("ran"));
    assertThat(
            new String(client(none).call(open.endpoint(), "op", "r", 1, text(""), TIMEOUT).join()))
        .as("both without a secret, on loopback")
        .isEqualTo("ran");
    ForwardingException openServer =
        failure(client().call(open.endpoint(), "op", "r", 1, text(""), TIMEOUT));
    assertThat(openServer.reason()).isEqualTo(ForwardingException.Reason.NOT_AUTHENTICATED);
    assertThat(openServer).hasMessageContaining("takes forwarded requests without a secret");
  }

  @Test
  void forwardingWithoutASecretListensOnLoopbackOnlyAndSomeSecurityIsRequired() {
    assertThatThrownBy(
            () ->
                ForwardingServer.builder()
                    .host("0.0.0.0")
                    .ownership((range, epoch) -> true)
                    .security(ForwardingSecurity.unauthenticatedOnLoopback())
                    .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("loopback addresses only, got 0.0.0.0")
        .hasMessageContaining("forwardingSecurity");
    assertThatThrownBy(() -> ForwardingServer.builder().ownership((range, epoch) -> true).start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("forwarding security is required");
    assertThatThrownBy(() -> ForwardingSecurity.sharedSecret(text("short")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 16 bytes, got 5");
    assertThat(SECURITY.toString()).doesNotContain("test-only");
  }

  /** A peer that answers the challenge protocol but cannot prove the secret gets no request. */
  @Test
  void aServerThatCannotProveTheSecretGetsNoRequest() throws Exception {
    try (java.net.ServerSocket impostor = new java.net.ServerSocket(0)) {
      CompletableFuture<byte[]> received =
          CompletableFuture.supplyAsync(
              () -> {
                try (Socket peer = impostor.accept()) {
                  peer.setSoTimeout(10_000);
                  java.io.DataOutputStream out =
                      new java.io.DataOutputStream(peer.getOutputStream());
                  java.io.DataInputStream in = new java.io.DataInputStream(peer.getInputStream());
                  out.writeInt(3 + 32);
                  out.write(new byte[] {'C', 1, 1});
                  out.write(new byte[32]);
                  out.flush();
                  in.readFully(new byte[in.readInt()]); // the answer
                  out.writeInt(1 + 32);
                  out.write('P');
                  out.write(new byte[32]); // no proof
                  out.flush();
                  return in.readAllBytes(); // whatever comes after: must be nothing
                } catch (java.io.IOException e) {
                  return new byte[0];
                }
              });

      ForwardingException refused =
          failure(
              client()
                  .call("127.0.0.1:" + impostor.getLocalPort(), "op", "r", 1, text("x"), TIMEOUT));

      assertThat(refused.reason()).isEqualTo(ForwardingException.Reason.NOT_AUTHENTICATED);
      assertThat(refused).hasMessageContaining("did not prove it holds the forwarding secret");
      assertThat(received.get(30, TimeUnit.SECONDS)).as("sent after the bad proof").isEmpty();
    }
  }
}
