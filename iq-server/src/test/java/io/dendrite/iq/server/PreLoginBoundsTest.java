package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * With a login required, a connection that has not logged in can hold little and not for long: it is closed at
 * the login deadline, a data block larger than a login needs is refused before it is buffered, and such connections
 * cannot take the slots a client that logs in needs.
 */
class PreLoginBoundsTest {

  private IqServer server;

  @AfterEach
  void stop() {
    server.close();
  }

  private void start(IqServerConfig.Builder builder) {
    server =
        IqServer.start(
            builder.port(0).credentials(Credentials.of(Map.of("app", "s3cret"))).build());
  }

  @Test
  void aConnectionThatDoesNotLogInIsClosedAtTheLoginDeadline() throws Exception {
    start(IqServerConfig.builder().loginTimeout(Duration.ofMillis(300)));
    try (TestConnection idle = new TestConnection(server.port())) {
      assertThat(idle.call("version")).isEqualTo("CLIENT_ERROR unauthenticated\n");
      Thread.sleep(1_000);
      assertThatThrownBy(idle::readLine)
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageContaining("connection closed");
      try (TestConnection c = TestConnection.loggedIn(server.port(), "app", "s3cret")) {
        assertThat(ServerBoundsTest.statValue(c, "login_timeouts")).isEqualTo(1);
        Thread.sleep(1_000);
        assertThat(c.call("version"))
            .as("a logged-in connection has no deadline")
            .startsWith("VERSION");
      }
    }
  }

  @Test
  void aDataBlockLargerThanALoginIsRefusedBeforeItIsBufferedAndTheConnectionClosed() {
    start(IqServerConfig.builder());
    try (TestConnection c = new TestConnection(server.port())) {
      c.send("set k 0 0 1048000\n" + "x".repeat(1000)); // the rest of the block never comes
      assertThat(c.readLine())
          .isEqualTo("CLIENT_ERROR data block too large before login (more than 4096 bytes)");
      assertThatThrownBy(c::readLine)
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageContaining("connection closed");
    }
    try (TestConnection c = new TestConnection(server.port())) {
      String login = "app s3cret";
      c.send(
          "set login 0 0 "
              + login.length()
              + "\n"
              + login
              + "\nset big 0 0 100000\n"
              + "y".repeat(100_000));
      assertThat(c.readLine()).isEqualTo("STORED");
      assertThat(c.readLine())
          .as("after the login, in the same burst, blocks up to the item size")
          .isEqualTo("STORED");
    }
  }

  @Test
  void connectionsThatDoNotLogInCannotLockOutOneThatDoes() {
    start(IqServerConfig.builder().maxConnections(8).loginTimeout(Duration.ofMinutes(1)));
    List<TestConnection> strangers = new ArrayList<>();
    try {
      for (int i = 0; i < 8; i++) {
        TestConnection stranger = new TestConnection(server.port());
        strangers.add(stranger);
        stranger.call("version"); // opened and served before the next one
      }
      try (TestConnection c = TestConnection.loggedIn(server.port(), "app", "s3cret")) {
        assertThat(c.call("version")).startsWith("VERSION");
        assertThat(ServerBoundsTest.statValue(c, "pending_logins")).isLessThanOrEqualTo(2);
        assertThat(ServerBoundsTest.statValue(c, "pending_logins_evicted"))
            .isGreaterThanOrEqualTo(6);
      }
    } finally {
      strangers.forEach(TestConnection::close);
    }
  }
}
