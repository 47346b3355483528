package io.dendrite.iq.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReplyParserTest {

  private static Reply.Value value(
      String key, int flags, boolean pending, long cas, boolean staged, String data) {
    return new Reply.Value(
        key, flags, pending, cas, staged, data.getBytes(StandardCharsets.US_ASCII));
  }

  private static Reply entries(Reply.Entry... entries) {
    return new Reply.Entries(List.of(entries));
  }

  private static Reply status(String line) {
    return new Reply.Status(line);
  }

  /** Every reply shape of the IQ-Twemcached reference (and of stock memcached) the client meets. */
  static Stream<Arguments> shapes() {
    return Stream.of(
        // one-line replies
        Arguments.of(ReplyFormat.LINE, "STORED\r\n", status("STORED")),
        Arguments.of(ReplyFormat.LINE, "NOT_STORED\r\n", status("NOT_STORED")),
        Arguments.of(ReplyFormat.LINE, "LEASE 1\r\n", status("LEASE 1")),
        Arguments.of(ReplyFormat.LINE, "OK 0 14\r\n", status("OK 0 14")),
        Arguments.of(ReplyFormat.LINE, "OK_NOVALUE 0 15\r\n", status("OK_NOVALUE 0 15")),
        Arguments.of(
            ReplyFormat.LINE,
            "SERVER_ERROR out of pinned memory\r\n",
            status("SERVER_ERROR out of pinned memory")),
        Arguments.of(ReplyFormat.LINE, "42\r\n", status("42")),
        Arguments.of(ReplyFormat.LINE, "DELETED\r\n", status("DELETED")),
        Arguments.of(ReplyFormat.LINE, "NOT_FOUND\r\n", status("NOT_FOUND")),
        Arguments.of(ReplyFormat.LINE, "EXISTS\r\n", status("EXISTS")),
        Arguments.of(ReplyFormat.LINE, "INVALID\r\n", status("INVALID")),
        Arguments.of(ReplyFormat.LINE, "ABORT\r\n", status("ABORT")),
        Arguments.of(ReplyFormat.LINE, "OK\r\n", status("OK")),
        Arguments.of(ReplyFormat.LINE, "OK k1 k3 \r\n", status("OK k1 k3 ")),
        Arguments.of(ReplyFormat.LINE, "ERROR\r\n", status("ERROR")),
        Arguments.of(
            ReplyFormat.LINE,
            "CLIENT_ERROR bad data chunk\r\n",
            status("CLIENT_ERROR bad data chunk")),
        // get / gets
        Arguments.of(ReplyFormat.VALUES, "END\r\n", entries()),
        Arguments.of(ReplyFormat.VALUES, "ERROR\r\n", status("ERROR")),
        Arguments.of(
            ReplyFormat.VALUES,
            "VALUE k 5 3\r\nabc\r\nEND\r\n",
            entries(value("k", 5, false, 0, false, "abc"))),
        Arguments.of(
            ReplyFormat.VALUES,
            "VALUE a 0 2 77\r\nA1\r\nVALUE nv:b 1 0 78\r\n\r\nEND\r\n",
            entries(value("a", 0, false, 77, false, "A1"), value("nv:b", 1, false, 78, false, ""))),
        Arguments.of(
            ReplyFormat.VALUES,
            "VALUE bin 0 4\r\n\r\n\r\n\r\nEND\r\n",
            entries(value("bin", 0, false, 0, false, "\r\n\r\n"))),
        Arguments.of(
            ReplyFormat.VALUES,
            "STAT pid 12\r\nSTAT version 1.6 x\r\nEND\r\n",
            entries(new Reply.Stat("pid", "12"), new Reply.Stat("version", "1.6 x"))),
        // iqget
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "VALUE u1 0 0 5\r\nhello\r\nEND\r\n",
            entries(value("u1", 0, false, 0, false, "hello"))),
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "VALUE u1 3 1 2\r\nhi\r\nEND\r\n",
            entries(value("u1", 3, true, 0, false, "hi"))),
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "VALUE nv:c1 0 0 3\r\nabc\r\nEND\r\n",
            entries(value("c1", 0, false, 0, true, "abc"))),
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "LVALUE ls:u1 0 0 5\r\nEND\r\n",
            entries(new Reply.Lease("u1", 5, false))),
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "LVALUE ls:u1 0 1 3\r\nEND\r\n",
            entries(new Reply.Lease("u1", 3, true))),
        Arguments.of(
            ReplyFormat.IQ_ENTRIES, "NOVALUE  0\r\nEND\r\n", entries(new Reply.NoValue(""))),
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "SERVER_ERROR out of memory\r\n",
            status("SERVER_ERROR out of memory")),
        // qaread
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "LEASE r1 0 0 10 3\r\none\r\nEND\r\n",
            entries(new Reply.Lease("r1", 10, false), value("r1", 0, false, 0, false, "one"))),
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "LVALUE r1 0 0 11\r\n\r\nEND\r\n",
            entries(new Reply.Lease("r1", 11, false))),
        Arguments.of(
            ReplyFormat.IQ_ENTRIES,
            "LVALUE r1 0 0 3\r\n\r\nEND\r\n",
            entries(new Reply.Lease("r1", 3, false))),
        // ciget / cogets / oqread / oqincr
        Arguments.of(
            ReplyFormat.SESSION_ENTRIES,
            "VALUE s1 7 2\r\nok\r\nEND\r\n",
            entries(value("s1", 7, false, 0, false, "ok"))),
        Arguments.of(
            ReplyFormat.SESSION_ENTRIES,
            "VALUE nv:s1 0 2\r\nst\r\nEND\r\n",
            entries(value("s1", 0, false, 0, true, "st"))),
        Arguments.of(
            ReplyFormat.SESSION_ENTRIES,
            "LVALUE ls:s1 0 21\r\nEND\r\n",
            entries(new Reply.Lease("s1", 21, false))),
        Arguments.of(
            ReplyFormat.SESSION_ENTRIES, "NOVALUE  0\r\nEND\r\n", entries(new Reply.NoValue(""))),
        Arguments.of(ReplyFormat.SESSION_ENTRIES, "RETRY\r\n", status("RETRY")),
        Arguments.of(ReplyFormat.SESSION_ENTRIES, "ABORT\r\n", status("ABORT")),
        Arguments.of(
            ReplyFormat.SESSION_ENTRIES,
            "VALUE m1 0 2\r\nM1\r\nLEASE m2 26\r\nNOVALUE m3\r\nRETRY m4\r\nEND\r\n",
            entries(
                value("m1", 0, false, 0, false, "M1"),
                new Reply.Lease("m2", 26, false),
                new Reply.NoValue("m3"),
                new Reply.Retry("m4"))),
        Arguments.of(
            ReplyFormat.SESSION_ENTRIES,
            "NOVALUE s2 0\r\n\r\nEND\r\n",
            entries(new Reply.NoValue("s2"))),
        Arguments.of(
            ReplyFormat.SESSION_ENTRIES, "VALUE 9\r\nEND\r\n", entries(new Reply.Counter(9))),
        // oqappends / oqswaps
        Arguments.of(
            ReplyFormat.BATCH,
            "STORED\r\nSTORED\r\nNOT_STORED\r\nEND\r\n",
            entries(
                new Reply.Line("STORED"), new Reply.Line("STORED"), new Reply.Line("NOT_STORED"))),
        Arguments.of(
            ReplyFormat.BATCH,
            "STORED\r\n\r\nEND\r\n",
            entries(new Reply.Line("STORED"), new Reply.Line(""))),
        Arguments.of(ReplyFormat.BATCH, "ABORT\r\n", status("ABORT")));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("shapes")
  void parsesEveryShape(ReplyFormat format, String wire, Reply expected) {
    ByteBuf in = Unpooled.copiedBuffer(wire + "STORED\r\n", StandardCharsets.US_ASCII);
    assertThat(render(ReplyParser.parse(in, format))).isEqualTo(render(expected));
    // Exactly the reply is consumed: what follows belongs to the next request.
    assertThat(in.toString(StandardCharsets.US_ASCII)).isEqualTo("STORED\r\n");
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("shapes")
  void waitsForMoreBytesAtEverySplitPoint(ReplyFormat format, String wire, Reply expected) {
    byte[] bytes = wire.getBytes(StandardCharsets.US_ASCII);
    for (int split = 0; split < bytes.length; split++) {
      ByteBuf in = Unpooled.buffer();
      in.writeBytes(bytes, 0, split);
      assertThat(ReplyParser.parse(in, format))
          .as("after %d of %d bytes", split, bytes.length)
          .isNull();
      assertThat(in.readerIndex()).isZero();
      in.writeBytes(bytes, split, bytes.length - split);
      assertThat(render(ReplyParser.parse(in, format))).isEqualTo(render(expected));
      assertThat(in.isReadable()).isFalse();
    }
  }

  @Test
  void rejectsGarbageInsideAReply() {
    ByteBuf in =
        Unpooled.copiedBuffer("VALUE k 0 1\r\nx\r\nBOGUS\r\nEND\r\n", StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> ReplyParser.parse(in, ReplyFormat.VALUES))
        .isInstanceOf(MalformedReplyException.class);
  }

  @Test
  void rejectsADataBlockWithoutItsTerminator() {
    ByteBuf in = Unpooled.copiedBuffer("VALUE k 0 1\r\nxy\r\nEND\r\n", StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> ReplyParser.parse(in, ReplyFormat.VALUES))
        .isInstanceOf(MalformedReplyException.class);
  }

  /** Records holding byte arrays compare by identity; compare their printed form instead. */
  private static String render(Reply reply) {
    return String.valueOf(reply);
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(
      strings = {
        "",
        " ",
        "   ",
        "VALUE k 0 5",
        "VALUE  k 0  5 ",
        " LEASE k",
        "a",
        "a ",
        " a",
        "  a  b   c  ",
        "NOVALUE  0",
        "STAT pid 12"
      })
  void wordsSplitsAsTheRegularExpressionOfRunsOfSpacesWould(String line) {
    assertThat(ReplyParser.words(line)).containsExactly(line.split(" +"));
  }
}
