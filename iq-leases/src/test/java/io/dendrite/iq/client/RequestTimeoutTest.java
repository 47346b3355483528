package io.dendrite.iq.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A server that accepts but never answers cannot be produced with the real IQ server, so this one
 * test listens on a bare loopback socket: it checks the client's own guarantee that a silent server
 * turns into an exception within the request timeout instead of a hang.
 */
class RequestTimeoutTest {

  @Test
  void aServerThatStopsAnsweringFailsRequestsAfterTheTimeoutAndBumpsItsEpoch() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        IqClient client =
            IqClient.builder()
                .servers("127.0.0.1:" + silent.getLocalPort())
                .requestTimeout(Duration.ofMillis(300))
                .build()) {
      Thread acceptor =
          new Thread(
              () -> {
                try (Socket accepted = silent.accept()) {
                  Thread.sleep(10_000);
                } catch (Exception ignored) {
                  // the test is over
                }
              });
      acceptor.setDaemon(true);
      acceptor.start();
      ServerConnection server = client.connectionFor("k");
      long epoch = server.epoch();
      long start = System.nanoTime();

      assertThatThrownBy(() -> client.get("k")).isInstanceOf(IqConnectionException.class);

      assertThat((System.nanoTime() - start) / 1_000_000).isBetween(300L, 3_000L);
      assertThat(server.epoch()).isGreaterThan(epoch);
    }
  }
}
