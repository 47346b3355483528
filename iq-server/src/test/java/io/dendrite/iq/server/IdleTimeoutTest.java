package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Idle sockets cannot hold every connection slot when an idle timeout is set. */
class IdleTimeoutTest {

  @Test
  void aConnectionThatSendsNothingForTheIdleTimeoutIsClosedAndItsSlotFreed() throws Exception {
    try (IqServer server =
        IqServer.start(
            IqServerConfig.builder()
                .port(0)
                .maxConnections(1)
                .idleTimeout(Duration.ofMillis(300))
                .build())) {
      try (TestConnection idle = new TestConnection(server.port())) {
        assertThat(idle.call("version")).startsWith("VERSION");
        // Waits for the close (readLine waits up to 5 s) instead of sleeping a fixed second: a
        // busy event loop could close it later, and its slot is freed just after the close.
        assertThatThrownBy(idle::readLine)
            .isInstanceOf(UncheckedIOException.class)
            .hasMessageContaining("connection closed");
        String reply = awaitASlot(server.port());
        assertThat(reply)
            .as("the one slot is free again: not ERROR Too many open connections")
            .contains("STAT idle_timeout_ms 300\n");
      }
    }
  }

  /** {@code stats settings} on a new connection, once one is let in within 10 s; else the refusal. */
  private static String awaitASlot(int port) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (true) {
      String reply;
      try (TestConnection next = new TestConnection(port)) {
        reply = next.call("stats settings");
      } catch (UncheckedIOException refusedAndClosed) {
        reply = "ERROR Too many open connections (" + refusedAndClosed.getMessage() + ")";
      }
      if (!reply.startsWith("ERROR Too many open connections")
          || System.nanoTime() - deadline > 0) {
        return reply;
      }
      Thread.sleep(20);
    }
  }

  @Test
  void withoutAnIdleTimeoutAQuietConnectionStaysOpen() throws Exception {
    try (IqServer server = IqServer.start(IqServerConfig.builder().port(0).build());
        TestConnection quiet = new TestConnection(server.port())) {
      Thread.sleep(500);
      assertThat(quiet.call("version")).startsWith("VERSION");
      assertThat(quiet.call("stats settings")).contains("STAT idle_timeout_ms 0\n");
    }
  }
}
