package io.dendrite.iq.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
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

  @Test
  void aWriteToAServerThatStopsReadingFailsAtItsDeadlineSayingHowLongItWaited() throws Exception {
    try (ServerSocket deaf = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        SocketChannel channel =
            SocketChannel.open(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), deaf.getLocalPort()));
        Socket accepted = deaf.accept()) {
      channel.configureBlocking(false);
      Duration timeout = Duration.ofMillis(200);
      Wire wire = new Wire.Plain(channel, "deaf", timeout);
      // More than the socket buffers of both ends hold, while the peer reads nothing.
      ByteBuffer[] bytes = {ByteBuffer.allocate(64 << 20)};

      assertThatThrownBy(() -> wire.write(bytes, System.nanoTime() + timeout.toNanos()))
          .isInstanceOf(IOException.class)
          .hasMessage(
              "could not write to deaf within 200 ms: its send buffer stayed full (the server is not"
                  + " reading)");
    }
  }
}
