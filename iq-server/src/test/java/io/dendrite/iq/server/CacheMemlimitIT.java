package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code cache_memlimit <megabytes> [noreply]} changes the budget for unpinned items ({@code --memory}) at run time,
 * with memcached 1.6's replies; only a user who may change reserved keys may send it.
 */
class CacheMemlimitIT {

  private static IqServer start(IqServerConfig.Builder settings) {
    return IqServer.start(settings.port(0).build());
  }

  private static String stat(TestConnection c, String command, String name) {
    return c.call(command)
        .lines()
        .filter(line -> line.startsWith("STAT " + name + " "))
        .map(line -> line.substring(("STAT " + name + " ").length()))
        .findFirst()
        .orElseThrow(() -> new AssertionError(command + " has no " + name));
  }

  @Test
  void okSetsTheBudgetThatStatsReport() {
    try (IqServer server = start(IqServerConfig.builder().memoryBytes(64L << 20));
        TestConnection c = new TestConnection(server.port())) {
      assertThat(c.call("cache_memlimit 100")).isEqualTo("OK\n");
      assertThat(stat(c, "stats", "limit_maxbytes")).isEqualTo(String.valueOf(100L << 20));
      assertThat(stat(c, "stats settings", "maxbytes")).isEqualTo(String.valueOf(100L << 20));
      c.send("cache_memlimit 12 noreply");
      assertThat(c.call("version")).as("noreply: no OK before it").startsWith("VERSION ");
      assertThat(stat(c, "stats", "limit_maxbytes")).isEqualTo(String.valueOf(12L << 20));
    }
  }

  @Test
  void aSmallerBudgetEvictsUnpinnedItemsAtOnceAndLeavesPinnedOnes() {
    try (IqServer server = start(IqServerConfig.builder().memoryBytes(64L << 20));
        TestConnection c = new TestConnection(server.port())) {
      String value = "v".repeat(512 << 10);
      for (int i = 0; i < 40; i++) { // 20 MiB
        assertThat(c.call("set k" + i + " 0 0 " + value.length() + "\n" + value))
            .isEqualTo("STORED\n");
      }
      assertThat(c.call("set pinned 0 0 " + value.length() + " 1\n" + value)).isEqualTo("STORED\n");
      assertThat(stat(c, "stats", "evictions")).isEqualTo("0");

      assertThat(c.call("cache_memlimit 8")).isEqualTo("OK\n");

      assertThat(Long.parseLong(stat(c, "stats", "unpinned_bytes"))).isLessThanOrEqualTo(8L << 20);
      assertThat(Long.parseLong(stat(c, "stats", "evictions"))).isGreaterThanOrEqualTo(24);
      assertThat(c.call("get pinned")).startsWith("VALUE pinned ");
      assertThat(stat(c, "stats", "pinned_items")).isEqualTo("1");
    }
  }

  @Test
  void memcachedsRefusalsLeaveTheBudgetAsItWas() {
    try (IqServer server = start(IqServerConfig.builder().memoryBytes(64L << 20));
        TestConnection c = new TestConnection(server.port())) {
      assertThat(c.call("cache_memlimit 7"))
          .isEqualTo("MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\n");
      assertThat(c.call("cache_memlimit 1000000001"))
          .isEqualTo("MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes\n");
      assertThat(c.call("cache_memlimit 64m")).isEqualTo("ERROR\n");
      assertThat(c.call("cache_memlimit -8")).isEqualTo("ERROR\n");
      assertThat(c.call("cache_memlimit 4294967296")).isEqualTo("ERROR\n");
      assertThat(c.call("cache_memlimit")).isEqualTo("CLIENT_ERROR bad command line format\n");
      assertThat(stat(c, "stats", "limit_maxbytes")).isEqualTo(String.valueOf(64L << 20));
    }
  }

  @Test
  void onlyAUserWhoMayChangeReservedKeysMayChangeIt() {
    try (IqServer server =
            start(
                IqServerConfig.builder()
                    .memoryBytes(64L << 20)
                    .credentials(Credentials.of(Map.of("app", "s3cret", "ops", "0ps")))
                    .pinUsers(Set.of("app")));
        TestConnection anonymous = new TestConnection(server.port());
        TestConnection ops = TestConnection.loggedIn(server.port(), "ops", "0ps");
        TestConnection app = TestConnection.loggedIn(server.port(), "app", "s3cret")) {
      assertThat(anonymous.call("cache_memlimit 8")).isEqualTo("CLIENT_ERROR unauthenticated\n");
      assertThat(ops.call("cache_memlimit 8"))
          .isEqualTo("CLIENT_ERROR user ops may not change the memory limit\n");
      assertThat(ops.call("cache_memlimit 8 noreply"))
          .as("refused under noreply too: errors are always sent")
          .isEqualTo("CLIENT_ERROR user ops may not change the memory limit\n");
      assertThat(stat(app, "stats", "limit_maxbytes")).isEqualTo(String.valueOf(64L << 20));
      assertThat(app.call("cache_memlimit 8")).isEqualTo("OK\n");
      assertThat(stat(app, "stats", "limit_maxbytes")).isEqualTo(String.valueOf(8L << 20));
    }
  }
}
