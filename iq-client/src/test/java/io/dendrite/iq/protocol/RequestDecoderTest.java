package io.dendrite.iq.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The decoder on its own, through Netty's {@link EmbeddedChannel} (as Netty tests its codecs): bytes in any split,
 * requests or framing errors out, in order, and a bad request never desynchronises the ones after it.
 */
class RequestDecoderTest {
  private static final int MAX_LINE = 64;
  private static final int MAX_ITEM = 16;

  @Test
  void aRequestSplitIntoSingleBytesIsDecodedOnceWhole() {
    EmbeddedChannel channel = channel();
    for (byte b : bytes("set k 0 0 5\r\nhello\r\n")) {
      channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
    }
    List<Object> out = drain(channel);
    assertThat(out).hasSize(1);
    Request set = (Request) out.get(0);
    assertThat(set.command()).isEqualTo("set");
    assertThat(set.args()).containsExactly("k", "0", "0", "5");
    assertThat(new String(set.blocks().get(0), StandardCharsets.ISO_8859_1)).isEqualTo("hello");
  }

  @Test
  void pipelinedRequestsComeOutInOrderWithRunsOfSpacesAndBareNewlines() {
    EmbeddedChannel channel = channel();
    channel.writeInbound(
        Unpooled.wrappedBuffer(bytes("get   a  b\nset k 0 0 2\r\nhi\r\n\r\ndelete k\r\n")));
    List<Object> out = drain(channel);
    assertThat(out)
        .extracting(o -> ((Request) o).command())
        .containsExactly("get", "set", "", "delete");
    assertThat(((Request) out.get(0)).args()).containsExactly("a", "b");
  }

  @Test
  void anOverlongLineIsOneFramingErrorAndTheNextRequestStillDecodes() {
    EmbeddedChannel channel = channel();
    channel.writeInbound(Unpooled.wrappedBuffer(bytes("get " + "x".repeat(MAX_LINE * 3))));
    channel.writeInbound(Unpooled.wrappedBuffer(bytes("x".repeat(MAX_LINE) + "\r\nget k\r\n")));
    List<Object> out = drain(channel);
    assertThat(out).hasSize(2);
    assertThat(out.get(0)).isEqualTo(FramingError.clientError("line too long"));
    assertThat(((Request) out.get(1)).args()).containsExactly("k");
  }

  @Test
  void aBlockOverTheItemSizeIsSkippedAsItStreamsPastNotBuffered() {
    EmbeddedChannel channel = channel();
    int length = MAX_ITEM * 4;
    channel.writeInbound(Unpooled.wrappedBuffer(bytes("set big 0 0 " + length + "\r\n")));
    for (int sent = 0; sent < length; sent += 8) {
      channel.writeInbound(Unpooled.wrappedBuffer(bytes("y".repeat(8))));
    }
    channel.writeInbound(Unpooled.wrappedBuffer(bytes("\r\nget k\r\n")));
    List<Object> out = drain(channel);
    assertThat(out).hasSize(2);
    assertThat(out.get(0)).isEqualTo(FramingError.serverError("object too large for cache"));
    assertThat(((Request) out.get(1)).command()).isEqualTo("get");
  }

  @Test
  void aBlockWithoutItsTerminatorIsABadChunkAndDoesNotShiftTheNextRequest() {
    EmbeddedChannel channel = channel();
    channel.writeInbound(Unpooled.wrappedBuffer(bytes("set k 0 0 2\r\nhiXYget k\r\n")));
    List<Object> out = drain(channel);
    assertThat(out).hasSize(2);
    assertThat(out.get(0)).isEqualTo(FramingError.clientError("bad data chunk"));
    assertThat(((Request) out.get(1)).args()).containsExactly("k");
  }

  @Test
  void aMalformedLengthIsAFramingErrorNamedByTheLayout() {
    EmbeddedChannel channel = channel();
    channel.writeInbound(Unpooled.wrappedBuffer(bytes("set k 0 0 minus-one\r\nget k\r\n")));
    List<Object> out = drain(channel);
    assertThat(out).hasSize(2);
    assertThat(out.get(0)).isInstanceOf(FramingError.class);
    assertThat(((Request) out.get(1)).command()).isEqualTo("get");
  }

  private static EmbeddedChannel channel() {
    return new EmbeddedChannel(new RequestDecoder(MAX_LINE, MAX_ITEM));
  }

  private static List<Object> drain(EmbeddedChannel channel) {
    List<Object> out = new ArrayList<>();
    for (Object message = channel.readInbound(); message != null; message = channel.readInbound()) {
      out.add(message);
    }
    return out;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }
}
