package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server the runner starts on a port another process took between the runner's pick and the server's bind: the
 * server exits, and something else answers on that port. The runner must start it again elsewhere, not measure the
 * stranger.
 */
class ServerProcessIT {

  @Test
  void aServerWhosePortWasTakenIsStartedAgainOnAnotherPortAndTheStrangerIsNotMistakenForIt(
      @TempDir Path dir) throws Exception {
    try (ServerSocket stranger = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread answering = new Thread(() -> answerStatsAsAnotherProcess(stranger));
      answering.setDaemon(true);
      answering.start();
      AtomicInteger attempts = new AtomicInteger();
      int[] ports = {stranger.getLocalPort(), freePort()};

      try (ServerProcess memcached =
          ServerProcess.memcached(
              "memcached",
              "16",
              dir.resolve("memcached.log"),
              () -> ports[attempts.getAndIncrement()])) {
        assertThat(attempts).hasValue(2);
        assertThat(memcached.address()).isEqualTo("127.0.0.1:" + ports[1]);
        Map<String, Long> stats = memcached.stats();
        assertThat(stats).containsEntry("pid", memcached.pid());
      }
      assertThat(Files.readString(dir.resolve("memcached.log")))
          .isNotEmpty(); // the failed bind, said
    }
  }

  /** Answers {@code stats} on every connection with a pid no child of this test has. */
  private static void answerStatsAsAnotherProcess(ServerSocket socket) {
    while (!socket.isClosed()) {
      try (Socket connection = socket.accept()) {
        connection.getInputStream().read(new byte[64]);
        OutputStream out = connection.getOutputStream();
        out.write("STAT pid 1\r\nEND\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
      } catch (IOException closed) {
        return;
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
