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
  private final int start;
  private final long limit;
  private boolean quiet;

  /**
   * @param limit the most bytes one request's reply may take: a multi-key read of large values could otherwise ask
   *     the server to buffer gigabytes for one line
   */
  ReplyWriter(ByteBuf out, long limit) {
    this.out = out;
    this.start = out.writerIndex();
    this.limit = limit;
  }

  /** Thrown when the reply would pass the limit; {@link #replaceWithError} then takes back what was written. */
  static final class ReplyTooLargeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ReplyTooLargeException(long limit) {
      super("reply too large (more than " + limit + " bytes)", null, false, false);
    }
  }

  /** Takes back this request's reply so far and writes {@code line} instead. */
  void replaceWithError(String line) {
    out.writerIndex(start);
    error(line);
  }

  private void reserve(int bytes) {
    if ((long) out.writerIndex() - start + bytes > limit) {
      throw new ReplyTooLargeException(limit);
    }
  }

  void quiet(boolean quiet) {
    this.quiet = quiet;
  }

  /** One reply line; {@code \r\n} is added. */
  void line(String line) {
    if (!quiet) {
      reserve(line.length() + 2);
      out.writeCharSequence(line, StandardCharsets.ISO_8859_1);
      out.writeBytes(CRLF);
    }
  }

  /** A data block and its terminator. */
  void data(byte[] data) {
    if (!quiet) {
      reserve(data.length + 2);
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
