package io.dendrite.iq.server;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Writes reply lines for one request into the connection's outbound buffer. A command marks the
 * writer quiet for {@code noreply}; errors are written regardless, as memcached does, because a
 * client that cannot see an error has no other way to learn of it.
 */
final class ReplyWriter {

  private static final byte[] CRLF = {'\r', '\n'};

  private final ByteBuf out;
  private boolean quiet;

  ReplyWriter(ByteBuf out) {
    this.out = out;
  }

  void quiet(boolean quiet) {
    this.quiet = quiet;
  }

  /** One reply line; {@code \r\n} is added. */
  void line(String line) {
    if (!quiet) {
      out.writeCharSequence(line, StandardCharsets.ISO_8859_1);
      out.writeBytes(CRLF);
    }
  }

  /** A data block and its terminator. */
  void data(byte[] data) {
    if (!quiet) {
      out.writeBytes(data);
      out.writeBytes(CRLF);
    }
  }

  /** An error line, written even under {@code noreply}. */
  void error(String line) {
    out.writeCharSequence(line, StandardCharsets.ISO_8859_1);
    out.writeBytes(CRLF);
  }
}
