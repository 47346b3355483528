package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What issue 37 found could be made to grow without a bound: releases of unknown tids, tid and sid names, every
 * user's holdings together, and delayed flushes. Each is now charged, bounded and refused with a {@code
 * SERVER_ERROR} or {@code CLIENT_ERROR} naming the limit.
 */
class ServerBoundsTest {

  private static final long PER_CONNECTION = 64 << 10;

  private IqServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private IqServer start(IqServerConfig.Builder builder) {
    server = IqServer.start(builder.port(0).leaseLifetime(Duration.ofSeconds(30)).build());
    return server;
  }

  @Test
  void releasesOfUnknownTidsAreChargedAndRefusedPastTheConnectionsBound() {
    start(IqServerConfig.builder().maxHeldPerConnection(PER_CONNECTION));
    try (TestConnection c = new TestConnection(server.port())) {
      String reply = "";
      int released = 0;
      while (released < 5_000 && (reply = c.call("release r-" + released)).equals("NOT_FOUND\n")) {
        released++;
      }
      assertThat(reply).startsWith("SERVER_ERROR this connection holds too much");
      assertThat(released).isGreaterThan(100);
      assertThat(statValue(c, "held_limit_refusals")).isEqualTo(1);
      // A release that ends a transaction the client holds is never refused: it is how a client at
      // its bound frees
      // what it holds.
      try (TestConnection other = new TestConnection(server.port())) {
        assertThat(other.call("qaread k 0 T")).startsWith("LVALUE");
      }
      assertThat(c.call("release T")).isEqualTo("OK\n");
    }
  }

  @Test
  void tidAndSidNamesAreChargedWithTheirRecords() {
    start(IqServerConfig.builder());
    String longName = "n".repeat(200);
    try (TestConnection c = new TestConnection(server.port())) {
      assertThat(c.call("qaread k 0 t")).startsWith("LVALUE");
      long shortTid = statValue(c, "held_bytes");
      assertThat(c.call("commit t 0")).isEqualTo("OK\n");
      assertThat(c.call("qaread k 0 " + longName)).startsWith("LVALUE");
      long longTid = statValue(c, "held_bytes");
      assertThat(c.call("commit " + longName + " 0")).isEqualTo("OK\n");
      assertThat(longTid - shortTid).as("the tid record charges its name").isEqualTo(199);

      assertThat(c.call("oqreg s k")).isEqualTo("OK\n");
      long shortSid = statValue(c, "held_bytes");
      assertThat(c.call("dcommit s")).isEqualTo("OK\n");
      assertThat(c.call("oqreg " + longName + " k")).isEqualTo("OK\n");
      long longSid = statValue(c, "held_bytes");
      assertThat(c.call("dcommit " + longName)).isEqualTo("OK\n");
      assertThat(longSid - shortSid).as("the session record charges its name").isEqualTo(199);
      assertThat(statValue(c, "held_bytes")).isZero();
    }
  }

  @Test
  void everyUserTogetherIsBoundedByTheServersMemory() {
    // Each user may hold a GiB; the server's --memory (the total's default) is 256 KiB.
    start(
        IqServerConfig.builder()
            .credentials(Credentials.of(Map.of("a", "pa", "b", "pb")))
            .memoryBytes(256 << 10)
            .maxHeldPerConnection(1L << 30)
            .maxHeldPerUser(1L << 30));
    try (TestConnection a = TestConnection.loggedIn(server.port(), "a", "pa");
        TestConnection b = TestConnection.loggedIn(server.port(), "b", "pb")) {
      int taken = 0;
      String reply = "";
      while (taken < 10_000
          && (reply = a.call("qaread a-" + taken + " 0 T")).startsWith("LVALUE")) {
        taken++;
      }
      assertThat(reply)
          .startsWith("SERVER_ERROR every user together holds too much")
          .contains("limit " + (256 << 10) + " (--max-held-total)");
      assertThat(b.call("qaread b-0 0 U"))
          .as("another user, far within its own bound, is refused too: the total is full")
          .startsWith("SERVER_ERROR every user together holds too much");
      assertThat(a.call("release T")).isEqualTo("OK\n");
      assertThat(b.call("qaread b-0 0 U")).startsWith("LVALUE");
    }
  }

  @Test
  void aDelayedFlushIsChargedAndALaterOneReplacesIt() throws Exception {
    start(IqServerConfig.builder());
    try (TestConnection c = new TestConnection(server.port())) {
      assertThat(c.call("set k 0 0 1\nv")).isEqualTo("STORED\n");
      assertThat(c.call("flush_all 1")).isEqualTo("OK\n");
      for (int i = 0; i < 1_000; i++) {
        assertThat(c.call("flush_all 3600")).isEqualTo("OK\n");
      }
      assertThat(statValue(c, "held_bytes"))
          .as("one pending flush, charged once")
          .isEqualTo(HeldBytes.RECORD_OVERHEAD);
      Thread.sleep(1_500);
      assertThat(c.call("get k"))
          .as("the flush in 1 s was replaced")
          .isEqualTo("VALUE k 0 1\nv\nEND\n");
      assertThat(c.call("flush_all")).isEqualTo("OK\n");
      assertThat(c.call("get k")).isEqualTo("END\n");
      assertThat(statValue(c, "held_bytes")).as("a flush now ends the pending one").isZero();
    }
  }

  @Test
  void aFlushMoreThan30DaysAheadIsRefused() {
    start(IqServerConfig.builder());
    try (TestConnection c = new TestConnection(server.port())) {
      assertThat(c.call("flush_all 4102444800")) // 2100-01-01, a Unix time
          .isEqualTo("CLIENT_ERROR flush_all delay more than 30 days ahead\n");
      assertThat(c.call("flush_all 2592000")).as("30 days exactly").isEqualTo("OK\n");
    }
  }

  @Test
  void whenMemoryRunsOutPinnedWritesAreRefusedNeverAcceptedAndDropped() {
    start(IqServerConfig.builder().memoryBytes(64 << 10).pinnedMemoryBytes(8 << 10));
    String kb = "p".repeat(1000);
    try (TestConnection c = new TestConnection(server.port())) {
      // A swap staged while the pinned quota has room, committed once it has none.
      long token = TestConnection.token(c.call("qaread late 0 T"));
      assertThat(c.call("swap late 0 0 1000 " + token + " 1\n" + kb)).isEqualTo("STORED\n");
      int pinned = 0;
      String reply;
      while ((reply = c.call("set p" + pinned + " 0 0 1000 1\n" + kb)).equals("STORED\n")) {
        pinned++;
      }
      assertThat(reply).isEqualTo("SERVER_ERROR out of pinned memory\n");
      assertThat(c.call("append p0 0 0 1000\n" + kb))
          .isEqualTo("SERVER_ERROR out of pinned memory\n");
      assertThat(c.call("mappend p0 1 1000\n" + kb))
          .isEqualTo("SERVER_ERROR out of pinned memory\n");
      assertThat(c.call("commit T 0")).isEqualTo("SERVER_ERROR out of pinned memory\n");
      assertThat(c.call("oqwrite S s 0 0 1000 1\n" + kb))
          .as("refused as it is staged")
          .isEqualTo("SERVER_ERROR out of pinned memory\n");
      // Unpinned memory far past its budget, and every user's holdings at the total.
      for (int i = 0; i < 1_000; i++) {
        c.call("set u" + i + " 0 0 1000\n" + kb);
      }
      int leases = 0;
      while (leases < 10_000 && (reply = c.call("iqget l" + leases + " 0")).startsWith("LVALUE")) {
        leases++;
      }
      assertThat(reply).startsWith("SERVER_ERROR every user together holds too much");
      assertThat(statValue(c, "evictions")).isPositive();
      for (int i = 0; i < pinned; i++) {
        assertThat(c.call("get p" + i))
            .as("p%s kept, and flagged pinned (bit 31)", i)
            .isEqualTo("VALUE p" + i + " 2147483648 1000\n" + kb + "\nEND\n");
      }
      assertThat(c.call("get late")).isEqualTo("END\n");
      assertThat(c.call("get s")).isEqualTo("END\n");
      assertThat(statValue(c, "pinned_items")).isEqualTo(pinned);
    }
  }

  static long statValue(TestConnection c, String name) {
    Matcher m = Pattern.compile("STAT " + name + " (\\d+)").matcher(c.call("stats"));
    assertThat(m.find()).as(name).isTrue();
    return Long.parseLong(m.group(1));
  }
}
