package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Bad input gets the standard error and leaves the connection usable. */
class MalformedInputTest {

  private static IqServer server;
  private TestConnection c;

  @BeforeAll
  static void startServer() {
    server = IqServer.start(IqServerConfig.builder().port(0).maxItemSize(1024).build());
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @BeforeEach
  void connect() {
    c = new TestConnection(server.port());
  }

  @AfterEach
  void disconnect() {
    assertThat(c.call("set alive 0 0 2\nok")).isEqualTo("STORED\n");
    assertThat(c.call("get alive")).isEqualTo("VALUE alive 0 2\nok\nEND\n");
    c.close();
  }

  @Test
  void aBatchLengthWrittenWithLeadingZerosIsTheLengthItSays() {
    // "00" is a length of zero, as "0" is: no data block follows. The layout and the command once
    // disagreed about it, and the command read a block that was not there (connection closed).
    c.call("set z1 0 0 1\na");
    String zero = c.call("oqswaps Z1 z1 0 0 0"); // INVALID: Z1 holds no lease on z1
    assertThat(c.call("dabort Z1")).isEqualTo("OK\n");
    assertThat(c.call("oqswaps Z2 z1 0 0 00")).isEqualTo(zero);
    assertThat(c.call("dabort Z2")).isEqualTo("OK\n");
    // An empty tuple's reply is an empty line, as for a length written "0".
    assertThat(c.callUntilEnd("oqappends Z3 z1 0 0 00 z1 0 0 002\n+b"))
        .isEqualTo("\nSTORED\nEND\n");
    assertThat(c.call("dcommit Z3")).isEqualTo("OK\n");
    assertThat(c.call("get z1")).isEqualTo("VALUE z1 0 3\na+b\nEND\n");
  }

  @Test
  void anExptimeTooFarAheadToCountInMillisecondsNeverExpiresInstead() {
    // exptime * 1000 overflowed into the past: the item expired as it was stored.
    assertThat(c.call("set far 0 9223372036854775807 1\nv")).isEqualTo("STORED\n");
    assertThat(c.call("get far")).isEqualTo("VALUE far 0 1\nv\nEND\n");
    assertThat(c.call("set far2 0 99999999999999999 1\nv")).isEqualTo("STORED\n");
    assertThat(c.call("touch far2 99999999999999999")).isEqualTo("TOUCHED\n");
    assertThat(c.call("get far2")).isEqualTo("VALUE far2 0 1\nv\nEND\n");
  }

  @Test
  void aFlushDelayTooFarAheadToCountInMillisecondsDoesNotFlushNow() {
    // delay * 1000 overflowed into a negative delay: the flush ran at once. Now a delay more than
    // 30 days ahead is
    // refused, and nothing changes.
    assertThat(c.call("set kept 0 0 1\nv")).isEqualTo("STORED\n");
    assertThat(c.call("flush_all 99999999999999999"))
        .isEqualTo("CLIENT_ERROR flush_all delay more than 30 days ahead\n");
    assertThat(c.call("flush_all 18446744073709551615"))
        .isEqualTo("CLIENT_ERROR flush_all delay more than 30 days ahead\n");
    assertThat(c.call("get kept")).isEqualTo("VALUE kept 0 1\nv\nEND\n");
  }

  @Test
  void oversizedKeyIsRejectedAndItsDataSwallowed() {
    String key = "k".repeat(251);
    assertThat(c.call("set " + key + " 0 0 3\nabc")).isEqualTo("CLIENT_ERROR key too long\n");
    assertThat(c.call("get " + key)).isEqualTo("CLIENT_ERROR key too long\n");
  }

  @Test
  void oversizedValueIsRejectedAndItsDataSwallowed() {
    assertThat(c.call("set big 0 0 1025\n" + "x".repeat(1025)))
        .as("memcached's reply: the request is well formed, the server will not hold it")
        .isEqualTo("SERVER_ERROR object too large for cache\n");
    assertThat(c.call("set big 0 0 1024\n" + "x".repeat(1024))).isEqualTo("STORED\n");
  }

  @Test
  void nonNumericFieldsAreClientErrors() {
    assertThat(c.call("set k abc 0 1\nx")).isEqualTo("CLIENT_ERROR bad flags\n");
    assertThat(c.call("set k 0 0 abc")).isEqualTo("CLIENT_ERROR bad data length\n");
    assertThat(c.call("set k 0 zz 1\nx")).isEqualTo("CLIENT_ERROR bad exptime\n");
    assertThat(c.call("incr k x")).isEqualTo("CLIENT_ERROR invalid numeric delta argument\n");
    assertThat(c.call("iqget k notatoken")).startsWith("CLIENT_ERROR");
    assertThat(c.call("set k 0 0 1 7\nx"))
        .isEqualTo("CLIENT_ERROR bad pimem field, expected 0 or 1\n");
  }

  @Test
  void unknownCommandsAndEmptyLinesGetError() {
    assertThat(c.call("frobnicate a b c")).isEqualTo("ERROR\n");
    assertThat(c.call("")).isEqualTo("ERROR\n");
  }

  @Test
  void linesThatCrashIqTwemcachedGetClientErrors() {
    assertThat(c.call("iqget k")).isEqualTo("CLIENT_ERROR bad command line format\n");
    assertThat(c.call("ciget S k")).isEqualTo("CLIENT_ERROR bad command line format\n");
    assertThat(c.call("cogets S")).isEqualTo("CLIENT_ERROR bad command line format\n");
    assertThat(c.call("check 20 a b")).isEqualTo("ERROR\n");
    assertThat(c.call("oqappend2 S k 1")).isEqualTo("ERROR\n");
    assertThat(c.call("oqappends S k 0 0")).isEqualTo("CLIENT_ERROR bad command line format\n");
  }

  @Test
  void badDataChunkTerminatorIsReportedAndSkipped() {
    c.sendRaw("set k 0 0 2\r\nabXY".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    assertThat(c.readReply(false, false)).isEqualTo("CLIENT_ERROR bad data chunk\n");
  }

  @Test
  void overlongLineIsRejectedUpToItsNewline() {
    assertThat(c.call("get " + "a".repeat(70_000))).isEqualTo("CLIENT_ERROR line too long\n");
  }

  @Test
  void stockSetFormSwapWithoutPimemAndNoreplyOnIqsetWork() {
    assertThat(c.call("set plain 5 0 1\nx")).isEqualTo("STORED\n");
    assertThat(c.call("get plain")).isEqualTo("VALUE plain 5 1\nx\nEND\n");
    long token = TestConnection.token(c.call("qaread plain 0 TN"));
    assertThat(c.call("swap plain 0 0 1 " + token + "\ny")).isEqualTo("STORED\n");
    long iToken = TestConnection.token(c.call("iqget fresh 0"));
    c.send("iqset fresh 0 0 1 " + iToken + " noreply\nz");
    assertThat(c.call("get fresh")).isEqualTo("VALUE fresh 0 1\nz\nEND\n");
    c.send("set q 0 0 1 noreply\nq");
    assertThat(c.call("get q")).isEqualTo("VALUE q 0 1\nq\nEND\n");
  }
}
