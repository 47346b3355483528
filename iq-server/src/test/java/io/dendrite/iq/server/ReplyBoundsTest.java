package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What one client's reads can make the server hold in replies is bounded. */
class ReplyBoundsTest {
  private static final int MB = 1 << 20;
  private static final String BIG = "b".repeat(MB - 100);

  private IqServer server;
  private TestConnection c;

  @BeforeEach
  void start() {
    server =
        IqServer.start(
            IqServerConfig.builder().port(0).maxItemSize(MB).memoryBytes(64L * MB).build());
    c = new TestConnection(server.port());
    assertThat(c.call("set big 0 0 " + BIG.length() + "\n" + BIG)).isEqualTo("STORED\n");
  }

  @AfterEach
  void stop() {
    c.close();
    server.close();
  }

  @Test
  void aReadWhoseReplyWouldPassTheLimitIsRefusedAndTheConnectionGoesOn() {
    String line = "get" + " big".repeat(70); // about 70 MB of reply for one short line
    assertThat(c.call(line)).isEqualTo("SERVER_ERROR reply too large (more than 67108864 bytes)\n");
    assertThat(c.call("get" + " big".repeat(3))).hasSizeGreaterThan(3 * BIG.length());
    assertThat(c.call("stats")).contains("STAT replies_too_large 1\n");
  }

  @Test
  void aClientThatSendsReadsButNeverReadsTheRepliesIsNotAnsweredBeyondTheWaterMarks()
      throws Exception {
    try (TestConnection silent = new TestConnection(server.port())) {
      // 1,000 reads of a 1 MB value: 1 GB of replies if the server wrote them all.
      StringBuilder reads = new StringBuilder();
      for (int i = 0; i < 1_000; i++) {
        reads.append("get big\r\n");
      }
      silent.sendRaw(reads.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      // Waits for the server to reach the silent connection's reads (on a busy machine it may not
      // within a fixed second), then watches the backlog for a second more.
      long deadline = System.nanoTime() + 30_000_000_000L;
      long unsent;
      while ((unsent = replyBytesUnsent()) == 0 && System.nanoTime() - deadline < 0) {
        Thread.sleep(20);
      }
      for (int i = 0; i < 20; i++) {
        Thread.sleep(50);
        unsent = Math.max(unsent, replyBytesUnsent());
      }
      assertThat(unsent)
          .as("replies written to the silent connection but not sent")
          .isPositive()
          .isLessThan(16L * MB);
    }
    assertThat(c.call("get big")).hasSizeGreaterThan(BIG.length());
  }

  private long replyBytesUnsent() {
    Matcher m = Pattern.compile("STAT reply_bytes_unsent (\\d+)").matcher(c.call("stats"));
    assertThat(m.find()).isTrue();
    return Long.parseLong(m.group(1));
  }
}
