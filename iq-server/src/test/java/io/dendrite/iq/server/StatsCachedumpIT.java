package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code stats cachedump <class> <limit>} and {@code stats items} as memcached 1.6 answers them, for a server without
 * slab classes: class 1 holds every item, the other ids memcached accepts (0 to 63) none.
 */
class StatsCachedumpIT {

  private static final Pattern ITEM = Pattern.compile("ITEM (\\S+) \\[(\\d+) b; (\\d+) s]");

  private static IqServer start(IqServerConfig.Builder settings) {
    return IqServer.start(settings.port(0).build());
  }

  /** The {@code ITEM} lines of a cachedump reply, by key: {@code [bytes, exptime]}. */
  private static Map<String, long[]> items(String reply) {
    assertThat(reply).endsWith("END\n");
    Map<String, long[]> items = new LinkedHashMap<>();
    for (String line : reply.lines().filter(line -> !line.equals("END")).toList()) {
      Matcher item = ITEM.matcher(line);
      assertThat(item.matches()).as(line).isTrue();
      items.put(
          item.group(1), new long[] {Long.parseLong(item.group(2)), Long.parseLong(item.group(3))});
    }
    return items;
  }

  @Test
  void classOneListsEveryLiveItemWithItsSizeAndItsExpiryAsAUnixTime() {
    try (IqServer server = start(IqServerConfig.builder());
        TestConnection c = new TestConnection(server.port())) {
      long start = System.currentTimeMillis() / 1000;
      assertThat(c.call("set plain 0 0 5\nhello")).isEqualTo("STORED\n");
      assertThat(c.call("set expiring 0 300 3\nabc")).isEqualTo("STORED\n");
      assertThat(c.call("set pinned 0 0 2 1\npp")).isEqualTo("STORED\n");
      assertThat(c.call("set gone 0 -1 1\nx")).isEqualTo("STORED\n");

      Map<String, long[]> items = items(c.callUntilEnd("stats cachedump 1 0"));

      assertThat(items).containsOnlyKeys("plain", "expiring", "pinned");
      assertThat(items.get("plain")).containsExactly(5, 0);
      assertThat(items.get("pinned")).containsExactly(2, 0);
      assertThat(items.get("expiring")[0]).isEqualTo(3);
      assertThat(items.get("expiring")[1]).isBetween(start + 300 - 60, start + 300 + 60);
    }
  }

  @Test
  void everyOtherClassMemcachedAcceptsIsEmptyAndOneBeyondIsRefused() {
    try (IqServer server = start(IqServerConfig.builder());
        TestConnection c = new TestConnection(server.port())) {
      assertThat(c.call("set k 0 0 1\nv")).isEqualTo("STORED\n");
      for (int slabClass : List.of(0, 2, 42, 63)) {
        assertThat(c.callUntilEnd("stats cachedump " + slabClass + " 0"))
            .as("class " + slabClass)
            .isEqualTo("END\n");
      }
      assertThat(c.call("stats cachedump 64 0")).isEqualTo("CLIENT_ERROR Illegal slab id\n");
      assertThat(c.call("stats cachedump 100000 1")).isEqualTo("CLIENT_ERROR Illegal slab id\n");
      assertThat(c.call("stats cachedump 1")).isEqualTo("CLIENT_ERROR bad command line\n");
      assertThat(c.call("stats cachedump one 1"))
          .isEqualTo("CLIENT_ERROR bad command line format\n");
      assertThat(c.call("stats cachedump 1 -1"))
          .isEqualTo("CLIENT_ERROR bad command line format\n");
      assertThat(c.call("version")).as("the connection stays in step").startsWith("VERSION ");
    }
  }

  @Test
  void theLimitCapsTheListingAndZeroListsAll() {
    try (IqServer server = start(IqServerConfig.builder());
        TestConnection c = new TestConnection(server.port())) {
      for (int i = 0; i < 5; i++) {
        assertThat(c.call("set k" + i + " 0 0 1\nv")).isEqualTo("STORED\n");
      }
      assertThat(items(c.callUntilEnd("stats cachedump 1 2"))).hasSize(2);
      assertThat(items(c.callUntilEnd("stats cachedump 1 5"))).hasSize(5);
      assertThat(items(c.callUntilEnd("stats cachedump 1 9"))).hasSize(5);
      assertThat(items(c.callUntilEnd("stats cachedump 1 0")))
          .containsOnlyKeys("k0", "k1", "k2", "k3", "k4");
    }
  }

  @Test
  void theListingStopsBeforeTheReplyWouldPassTwoMebibytesAsInMemcached() {
    try (IqServer server = start(IqServerConfig.builder());
        TestConnection c = new TestConnection(server.port())) {
      int count = 10_000; // about 2.6 MB of ITEM lines
      StringBuilder sets = new StringBuilder();
      for (int i = 0; i < count; i++) {
        sets.append(String.format("set %0240d 0 0 1 noreply\r\nv\r\n", i));
      }
      c.sendRaw(sets.toString().getBytes(StandardCharsets.US_ASCII));
      assertThat(c.call("stats items")).contains("STAT items:1:number " + count + "\n");

      String reply = c.callUntilEnd("stats cachedump 1 0");

      long wireBytes = reply.length() + reply.lines().count(); // each line ends in \r\n on the wire
      assertThat(wireBytes).isLessThanOrEqualTo(StatsCommand.CACHEDUMP_MAX_BYTES);
      assertThat(items(reply).size())
          .as("as many as fit")
          .isGreaterThan(count * 3 / 4)
          .isLessThan(count);
    }
  }

  @Test
  void statsItemsReportsClassOneOnlyWhenItHoldsItems() {
    try (IqServer server = start(IqServerConfig.builder());
        TestConnection c = new TestConnection(server.port())) {
      assertThat(c.callUntilEnd("stats items")).isEqualTo("END\n");
      assertThat(c.call("set a 0 0 1\nv")).isEqualTo("STORED\n");
      assertThat(c.call("set b 0 0 1 1\nv")).isEqualTo("STORED\n");
      assertThat(c.callUntilEnd("stats items"))
          .isEqualTo("STAT items:1:number 2\nSTAT items:1:evicted 0\nEND\n");
    }
  }

  @Test
  void aUserWhoMayNotChangeReservedKeysStillListsThemAsItMayGetThem() {
    try (IqServer server =
            start(
                IqServerConfig.builder()
                    .credentials(Credentials.of(Map.of("app", "s3cret", "ops", "0ps")))
                    .pinUsers(Set.of("app")));
        TestConnection app = TestConnection.loggedIn(server.port(), "app", "s3cret");
        TestConnection ops = TestConnection.loggedIn(server.port(), "ops", "0ps")) {
      assertThat(app.call("set Lock:BW:users:i1 0 0 1\nL")).isEqualTo("STORED\n");
      assertThat(ops.call("get Lock:BW:users:i1"))
          .as("reads are every logged-in user's")
          .isEqualTo("VALUE Lock:BW:users:i1 0 1\nL\nEND\n");
      assertThat(items(ops.callUntilEnd("stats cachedump 1 0")))
          .containsOnlyKeys("Lock:BW:users:i1");
    }
  }
}
