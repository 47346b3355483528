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
        Thread.sleep(1_000);
        try (TestConnection next = new TestConnection(server.port())) {
          assertThat(next.call("stats settings"))
              .as("the one slot is free again: not ERROR Too many open connections")
              .contains("STAT idle_timeout_ms 300\n");
        }
        assertThatThrownBy(idle::readLine)
            .isInstanceOf(UncheckedIOException.class)
            .hasMessageContaining("connection closed");
      }
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
