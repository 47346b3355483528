package io.dendrite.iq.endtoend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.ClientTls;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import io.dendrite.iq.server.ServerTls;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS between IqClient and the server, with certificates made by the JDK's keytool for this run: a client that
 * trusts the server's certificate is served; one that trusts another certificate gets no connection.
 */
class TlsIT {
  private static final String PASSWORD = "test-only";

  @TempDir static Path dir;

  private static SSLContext server;
  private static SSLContext trustsServer;
  private static SSLContext trustsAnother;

  @BeforeAll
  static void makeCertificates() throws Exception {
    Path password = dir.resolve("password");
    Files.writeString(password, PASSWORD + "\n");
    keystore("server");
    keystore("another");
    server = ServerTls.fromKeystore(dir.resolve("server.p12"), password);
    trustsServer = ClientTls.trusting(dir.resolve("server.p12"), PASSWORD.toCharArray());
    trustsAnother = ClientTls.trusting(dir.resolve("another.p12"), PASSWORD.toCharArray());
  }

  @Test
  void aClientThatTrustsTheServersCertificateIsServedOverTls() {
    try (IqServer iq = IqServer.start(IqServerConfig.builder().port(0).tls(server).build());
        IqClient client =
            IqClient.builder()
                .servers("127.0.0.1:" + iq.port())
                .connectionsPerServer(2)
                .tls(trustsServer)
                .build()) {
      assertThat(client.set("k", bytes("v"))).isEqualTo(Outcome.OK);
      assertThat(client.get("k")).map(CacheValue::text).hasValue("v");
      byte[] large = new byte[300_000]; // spans many TLS records both ways
      java.util.Arrays.fill(large, (byte) 'x');
      assertThat(client.set("large", large)).isEqualTo(Outcome.OK);
      assertThat(client.get("large").orElseThrow().data()).isEqualTo(large);
      List<CompletableFuture<Optional>> gets = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        gets.add(client.getAsync("k").thenApply(Optional::new));
      }
      gets.forEach(get -> assertThat(get.join().value()).isPresent());
      assertThat(client.read("miss")).isInstanceOf(ReadResult.Leased.class);
    }
  }

  @Test
  void aClientThatDoesNotTrustTheServersCertificateGetsNoConnection() {
    try (IqServer iq = IqServer.start(IqServerConfig.builder().port(0).tls(server).build());
        IqClient client =
            IqClient.builder()
                .servers("127.0.0.1:" + iq.port())
                .connectTimeout(Duration.ofSeconds(5))
                .tls(trustsAnother)
                .build()) {
      assertThatThrownBy(() -> client.get("k"))
          .isInstanceOf(IqConnectionException.class)
          .hasMessageContaining("cannot connect")
          .hasCauseInstanceOf(javax.net.ssl.SSLHandshakeException.class);
    }
  }

  @Test
  void aPlainClientGetsNothingFromATlsServer() {
    try (IqServer iq = IqServer.start(IqServerConfig.builder().port(0).tls(server).build());
        IqClient client =
            IqClient.builder()
                .servers("127.0.0.1:" + iq.port())
                .requestTimeout(Duration.ofSeconds(2))
                .build()) {
      assertThatThrownBy(() -> client.get("k")).isInstanceOf(IqException.class);
    }
  }

  private record Optional(java.util.Optional<CacheValue> value) {}

  /** A PKCS#12 keystore with a fresh EC key and a certificate for 127.0.0.1 and localhost. */
  private static void keystore(String name) throws Exception {
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process process =
        new ProcessBuilder(
                keytool.toString(),
                "-genkeypair",
                "-alias",
                name,
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=localhost",
                "-ext",
                "san=ip:127.0.0.1,dns:localhost",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                dir.resolve(name + ".p12").toString(),
                "-storepass",
                PASSWORD,
                "-keypass",
                PASSWORD)
            .redirectErrorStream(true)
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
