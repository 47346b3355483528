package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a client makes the server hold apart from items (leases, staged values, tid and session records) is bounded
 * per connection and per user, refused with a {@code SERVER_ERROR} past the bound, credited back exactly when it
 * goes, and a closed connection's I leases go with it.
 */
class HeldBoundsTest {

  private static final long PER_CONNECTION = 64 << 10;
  private static final String VALUE_8K = "v".repeat(8 << 10);

  private IqServer server;

  private IqServer start(long perUser) {
    server =
        IqServer.start(
            IqServerConfig.builder()
                .port(0)
                .maxHeldPerConnection(PER_CONNECTION)
                .maxHeldPerUser(perUser)
                .leaseLifetime(Duration.ofSeconds(30))
                .build());
    return server;
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void leasesPastTheConnectionsBoundAreRefusedAndOtherConnectionsServed() {
    start(1L << 30);
    try (TestConnection greedy = new TestConnection(server.port());
        TestConnection other = new TestConnection(server.port())) {
      long first = TestConnection.token(greedy.call("iqget key-0 0"));
      int granted = 1;
      String reply;
      while ((reply = greedy.call("iqget key-" + granted + " 0")).startsWith("LVALUE")) {
        granted++;
        assertThat(granted).as("refused before the bound is far behind").isLessThan(1_000);
      }
      assertThat(reply).startsWith("SERVER_ERROR this connection holds too much");
      assertThat(granted).isGreaterThan(100);
      assertThat(statValue(other, "held_limit_refusals")).isEqualTo(1);
      assertThat(other.call("iqget another 0")).startsWith("LVALUE ls:another");

      // Filling a lease credits it back: the connection is served again.
      assertThat(greedy.call("iqset key-0 0 0 1 " + first + "\nv")).isEqualTo("STORED\n");
      assertThat(greedy.call("iqget key-" + granted + " 0")).startsWith("LVALUE ls:key-");
    }
  }

  @Test
  void aStagedValuePastTheBoundIsRefusedAndNothingStaged() {
    start(1L << 30);
    try (TestConnection c = new TestConnection(server.port())) {
      int staged = 0;
      String reply = "";
      while (staged < 100) {
        long token = TestConnection.token(c.call("qaread big-" + staged + " 0 T"));
        reply =
            c.call(
                "swap big-" + staged + " 0 0 " + VALUE_8K.length() + " " + token + "\n" + VALUE_8K);
        if (!reply.equals("STORED\n")) {
          break;
        }
        staged++;
      }
      assertThat(reply).startsWith("SERVER_ERROR this connection holds too much");
      assertThat(staged).isBetween(5, 8);
      assertThat(c.call("commit T 0")).isEqualTo("OK\n");
      assertThat(c.call("get big-0")).startsWith("VALUE big-0 0 " + VALUE_8K.length());
      assertThat(c.call("get big-" + staged))
          .as("the refused swap staged nothing")
          .isEqualTo("END\n");
      assertThat(statValue(c, "held_bytes")).as("the commit credited everything back").isZero();
    }
  }

  @Test
  void aUsersConnectionsTogetherAreBoundedSoReconnectingDoesNotEscape() {
    start(PER_CONNECTION * 2);
    int taken = 0;
    String reply = "";
    for (int connection = 0;
        connection < 4 && !reply.startsWith("SERVER_ERROR the server");
        connection++) {
      try (TestConnection c = new TestConnection(server.port())) {
        // Q leases of a tid stay after the connection closes: another of the client's connections
        // may end them.
        while ((reply = c.call("qaread q-" + taken + " 0 T" + connection)).startsWith("LVALUE")) {
          taken++;
          assertThat(taken).as("refused before the bound is far behind").isLessThan(10_000);
        }
      }
    }
    assertThat(reply).startsWith("SERVER_ERROR the server holds too much");
    try (TestConnection c = new TestConnection(server.port())) {
      for (int connection = 0; connection < 4; connection++) {
        c.call("release T" + connection);
      }
      assertThat(c.call("qaread after 0 U")).startsWith("LVALUE");
    }
  }

  @Test
  void aClosedConnectionsInhibitLeasesGoAndTheirBytesAreCreditedBack() throws Exception {
    start(1L << 30);
    try (TestConnection other = new TestConnection(server.port())) {
      try (TestConnection closing = new TestConnection(server.port())) {
        assertThat(TestConnection.token(closing.call("iqget k 0"))).isPositive();
        assertThat(statValue(other, "held_bytes")).isPositive();
        assertThat(TestConnection.token(other.call("iqget k 0")))
            .as("busy: another holds the lease")
            .isEqualTo(LeaseCommands.HOT_MISS);
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (statValue(other, "held_bytes") != 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(statValue(other, "held_bytes")).isZero();
      assertThat(TestConnection.token(other.call("iqget k 0")))
          .as("the lease went with its connection, long before it would lapse")
          .isNotEqualTo(LeaseCommands.HOT_MISS);
    }
  }

  @Test
  void sessionsAndTheirStagedValuesAreChargedAndCreditedBack() {
    start(1L << 30);
    try (TestConnection c = new TestConnection(server.port())) {
      int staged = 0;
      String reply = "";
      while (staged < 100) {
        reply = c.call("oqwrite S s-" + staged + " 0 0 " + VALUE_8K.length() + "\n" + VALUE_8K);
        if (!reply.equals("STORED\n")) {
          break;
        }
        staged++;
      }
      assertThat(reply).startsWith("SERVER_ERROR this connection holds too much");
      assertThat(c.call("dcommit S")).isEqualTo("OK\n");
      assertThat(c.call("get s-0")).startsWith("VALUE s-0 0 " + VALUE_8K.length());
      assertThat(statValue(c, "held_bytes")).isZero();
    }
  }

  private static long statValue(TestConnection c, String name) {
    Matcher m = Pattern.compile("STAT " + name + " (\\d+)").matcher(c.call("stats"));
    assertThat(m.find()).as(name).isTrue();
    return Long.parseLong(m.group(1));
  }
}
