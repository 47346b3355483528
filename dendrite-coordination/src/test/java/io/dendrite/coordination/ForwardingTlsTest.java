package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forwarding through TLS (with the shared secret inside it), with certificates made for this run: a client that
 * trusts the owner's certificate is served; one that trusts another certificate sends nothing.
 */
class ForwardingTlsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final byte[] SECRET = bytes("the service's test-only secret");

  @TempDir static Path dir;

  private static TestCertificates owner;
  private static TestCertificates another;

  @BeforeAll
  static void makeCertificates() throws Exception {
    owner = TestCertificates.make(dir, "owner");
    another = TestCertificates.make(dir, "another");
  }

  @Test
  void aClientThatTrustsTheOwnersCertificateIsServedOverTls() {
    ForwardingSecurity security =
        ForwardingSecurity.sharedSecret(SECRET).tls(owner.server(), owner.trusting());
    try (ForwardingServer server = server(security);
        ForwardingClient client = new ForwardingClient(security)) {
      byte[] large = new byte[300_000]; // many TLS records both ways
      java.util.Arrays.fill(large, (byte) 'x');
      assertThat(client.call(server.endpoint(), "echo", "r", 1, large, TIMEOUT).join())
          .isEqualTo(large);
      assertThat(
              new String(
                  client.call(server.endpoint(), "echo", "r", 1, bytes("ok"), TIMEOUT).join()))
          .isEqualTo("ok");
      assertThat(security.toString()).contains("TLS");
    }
  }

  @Test
  void aClientThatDoesNotTrustTheOwnersCertificateSendsNothing() {
    int[] runs = {0};
    try (ForwardingServer server =
            server(ForwardingSecurity.sharedSecret(SECRET).tls(owner.server(), owner.trusting()));
        ForwardingClient client =
            new ForwardingClient(
                ForwardingSecurity.sharedSecret(SECRET)
                    .tls(another.server(), another.trusting()))) {
      server.register(
          "count",
          (range, body) -> {
            runs[0]++;
            return body;
          });
      ForwardingException refused =
          failure(client.call(server.endpoint(), "count", "r", 1, bytes("x"), TIMEOUT));
      assertThat(refused.reason()).isEqualTo(ForwardingException.Reason.NOT_AUTHENTICATED);
      assertThat(refused)
          .hasMessageContaining("TLS handshake with " + server.endpoint() + " failed")
          .hasCauseInstanceOf(SSLHandshakeException.class);
      assertThat(runs[0]).isZero();
    }
  }

  private static ForwardingServer server(ForwardingSecurity security) {
    ForwardingServer server =
        ForwardingServer.builder().ownership((range, epoch) -> true).security(security).start();
    server.register("echo", (range, body) -> body);
    return server;
  }

  private static ForwardingException failure(java.util.concurrent.CompletableFuture<byte[]> call) {
    try {
      call.get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | CompletionException e) {
      return (ForwardingException) e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("the call succeeded");
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
