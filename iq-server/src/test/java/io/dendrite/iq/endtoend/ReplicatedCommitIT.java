package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReplicatedTransaction;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A replicated commit whose transaction the server no longer knows: its record lapsed with its leases after the
 * swaps were staged (a holder slowed down past the lease lifetime, as a drain over a slow database is). The server
 * applies nothing then, and the holder must hear "lease lost" (retry), not "outcome unknown" (give up): a drain told
 * the latter stops instead of draining again in smaller batches.
 */
class ReplicatedCommitIT {

  @Test
  void aCommitThatLapsedOnEveryServerIsALostLeaseAndChangesNothing() throws Exception {
    try (IqServer server =
            IqServer.start(
                IqServerConfig.builder().port(0).leaseLifetime(Duration.ofMillis(10_000)).build());
        LapsingProxy proxy = new LapsingProxy(server.port());
        IqClient client =
            IqClient.builder()
                .servers(List.of(new ServerAddress("127.0.0.1", proxy.port())))
                .requestTimeout(Duration.ofSeconds(5))
                .build()) {
      assertThat(client.replicaPlacement().store(1).set("k", bytes("before")))
          .isEqualTo(Outcome.OK);
      try (ReplicatedTransaction locked =
          client.replicaPlacement().store(1).lock(List.of("k"), Duration.ofSeconds(5))) {
        locked.stage("k", bytes("after"));
        proxy.lapseBeforeNextCommit();

        assertThat(locked.commit()).isEqualTo(Outcome.INVALID);
      }
      assertThat(client.replicaPlacement().store(1).get("k").map(CacheValue::text))
          .hasValue("before");
    }
  }

  /**
   * Relays to a server line by line; when armed, it ends the transaction of the next {@code commit} on a side
   * connection ({@code release}: the server forgets the tid and its leases, as when they lapse) before passing the
   * commit on.
   */
  private static final class LapsingProxy implements AutoCloseable {
    private final ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final int target;
    private final AtomicBoolean armed = new AtomicBoolean();

    LapsingProxy(int target) throws IOException {
      this.target = target;
      Thread accepting = new Thread(this::accept, "lapsing-proxy");
      accepting.setDaemon(true);
      accepting.start();
    }

    int port() {
      return listener.getLocalPort();
    }

    void lapseBeforeNextCommit() {
      armed.set(true);
    }

    private void accept() {
      while (!listener.isClosed()) {
        try {
          Socket client = listener.accept();
          Socket backend = new Socket(InetAddress.getLoopbackAddress(), target);
          daemon(() -> relayRequests(client, backend));
          daemon(() -> backend.getInputStream().transferTo(client.getOutputStream()));
        } catch (IOException closed) {
          return;
        }
      }
    }

    /** Passes request lines on (data blocks are lines too), releasing an armed commit's tid first. */
    private void relayRequests(Socket client, Socket backend) throws IOException {
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(client.getInputStream(), StandardCharsets.ISO_8859_1));
      OutputStream out = backend.getOutputStream();
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.startsWith("commit ") && armed.compareAndSet(true, false)) {
          release(line.split(" ")[1]);
        }
        out.write((line + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
      }
    }

    private void release(String tid) throws IOException {
      try (Socket side = new Socket(InetAddress.getLoopbackAddress(), target)) {
        side.getOutputStream()
            .write(("release " + tid + "\r\n").getBytes(StandardCharsets.US_ASCII));
        new BufferedReader(new InputStreamReader(side.getInputStream(), StandardCharsets.US_ASCII))
            .readLine();
      }
    }

    private static void daemon(IoTask task) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  task.run();
                } catch (IOException closed) {
                  // the other side went away
                }
              });
      thread.setDaemon(true);
      thread.start();
    }

    @FunctionalInterface
    private interface IoTask {
      void run() throws IOException;
    }

    @Override
    public void close() throws IOException {
      listener.close();
    }
  }
}
