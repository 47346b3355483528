package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Pinned items have their own quota, survive memory pressure, and become evictable when unpinned. */
class PinnedItemsTest {

  private static final String KB = "x".repeat(1000);

  private IqServer server;
  private TestConnection c;

  @BeforeEach
  void start() {
    server =
        IqServer.start(
            IqServerConfig.builder()
                .port(0)
                .memoryBytes(64 * 1024)
                .pinnedMemoryBytes(8 * 1024)
                .build());
    c = new TestConnection(server.port());
  }

  @AfterEach
  void stop() {
    c.close();
    server.close();
  }

  @Test
  void pinnedStoresBeyondTheQuotaGetADistinctError() {
    int stored = 0;
    String reply;
    while ((reply = c.call("set p" + stored + " 0 0 1000 1\n" + KB)).equals("STORED\n")) {
      stored++;
    }
    assertThat(stored).isBetween(6, 8);
    assertThat(reply).isEqualTo("SERVER_ERROR out of pinned memory\n");
    assertThat(c.call("append p0 0 0 1000 1\n" + KB))
        .isEqualTo("SERVER_ERROR out of pinned memory\n");
    assertThat(c.call("set unpinned 0 0 1000 0\n" + KB)).isEqualTo("STORED\n");
  }

  @Test
  void pinnedItemsAreNeverEvictedButUnpinnedOnesAre() {
    assertThat(c.call("set pinned 0 0 1000 1\n" + KB)).isEqualTo("STORED\n");
    fill("a", 300);
    assertThat(c.call("get a0")).as("early unpinned items were evicted").isEqualTo("END\n");
    assertThat(c.call("get pinned")).contains(KB);
    assertThat(c.call("stats"))
        .containsPattern("STAT evictions [1-9]")
        .contains("STAT pinned_items 1\n");

    assertThat(c.call("unpin pinned")).isEqualTo("OK\n");
    assertThat(c.call("stats")).contains("STAT pinned_items 0\n").contains("STAT pinned_bytes 0\n");
    fill("b", 300);
    assertThat(c.call("get pinned")).as("unpinned items are evictable").isEqualTo("END\n");
  }

  @Test
  void multiAppendAppendsEveryBlockToOneKey() {
    assertThat(c.call("mappend log 1 3 2 1\nabc\nde\nf")).isEqualTo("STORED\n");
    assertThat(c.call("mappend log 0 2\ngh")).isEqualTo("STORED\n");
    assertThat(c.call("get log")).isEqualTo("VALUE log 2147483648 8\nabcdefgh\nEND\n");
    assertThat(c.call("stats")).contains("STAT pinned_items 1\n");
    assertThat(
            c.call(
                "mappend big 1 1000 1000 1000 1000 1000 1000 1000 1000 1000\n"
                    + (KB + "\n").repeat(8)
                    + KB))
        .isEqualTo("SERVER_ERROR out of pinned memory\n");
  }

  @Test
  void swapCarriesPimemThroughCommit() {
    c.call("set w 0 0 1\nv");
    long token = TestConnection.token(c.call("qaread w 0 T"));
    assertThat(c.call("swap w 0 0 2 " + token + " 1\nvv")).isEqualTo("STORED\n");
    assertThat(c.call("commit T 0")).isEqualTo("OK\n");
    assertThat(c.call("stats")).contains("STAT pinned_items 1\n");
  }

  @Test
  void aSessionCommitThatNoLongerFitsThePinnedQuotaKeepsThePreviousValueAndSaysSo() {
    // dcommit once removed the key when the staged pinned value did not fit, and answered OK: the
    // cache tier is the only holder of write-back's buffered writes.
    assertThat(c.call("set p 0 0 1 1\na")).isEqualTo("STORED\n");
    String big = "y".repeat(5000);
    assertThat(c.call("oqwrite S p 0 0 5000 1\n" + big)).isEqualTo("STORED\n");
    for (int i = 0; i < 3; i++) {
      assertThat(c.call("set q" + i + " 0 0 1000 1\n" + KB)).isEqualTo("STORED\n");
    }
    assertThat(c.call("dcommit S")).isEqualTo("SERVER_ERROR out of pinned memory\n");
    assertThat(c.call("get p")).isEqualTo("VALUE p 2147483648 1\na\nEND\n");
    assertThat(c.call("stats")).contains("STAT pinned_items 4\n");
  }

  @Test
  void flushAllDropsCachedItemsButLeavesPinnedOnesWhichAreData() {
    // Pinned items are write-back's buffered writes: a flush by any client once dropped them.
    assertThat(c.call("set pinned 0 0 1 1\np")).isEqualTo("STORED\n");
    assertThat(c.call("set cached 0 0 1\nc")).isEqualTo("STORED\n");
    assertThat(c.call("flush_all")).isEqualTo("OK\n");
    assertThat(c.call("get cached")).isEqualTo("END\n");
    assertThat(c.call("get pinned")).isEqualTo("VALUE pinned 2147483648 1\np\nEND\n");
    assertThat(c.call("unpin pinned")).isEqualTo("OK\n");
    assertThat(c.call("flush_all")).isEqualTo("OK\n");
    assertThat(c.call("get pinned")).as("unpinned, it is cache again").isEqualTo("END\n");
  }

  private void fill(String prefix, int count) {
    for (int i = 0; i < count; i++) {
      assertThat(c.call("set " + prefix + i + " 0 0 1000\n" + KB)).isEqualTo("STORED\n");
    }
  }
}
