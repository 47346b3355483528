package io.dendrite.iq.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Frames the memcached text protocol (plus the IQ and session families) into {@link Request}s.
 *
 * <p>The decoder never lets one bad request desynchronise the connection: whenever the extent of a
 * bad request is known (a data block of declared length, an over-long line up to its newline) it
 * is skipped and a {@link FramingError} is emitted in its place, so replies stay in request order.
 * Memory per connection is bounded by {@code maxLineBytes} plus the largest data block accepted
 * ({@code maxItemSize}); larger blocks are skipped as they stream past, never buffered.
 *
 * <p>Until {@link #trust()} is called (a server that asks for a login calls it once the connection has logged in), a
 * request whose data blocks together exceed {@code untrustedDataBytes} is refused before any of its data is buffered,
 * with a {@link FramingError} that closes the connection, and lines are limited to the same length; requests are
 * then decoded one at a time, so that a login takes effect before the request after it is framed.
 */
public final class RequestDecoder extends ByteToMessageDecoder {

  private enum State {
    LINE,
    BLOCKS,
    SKIP_LINE,
    SKIP_BYTES
  }

  private final int maxLineBytes;
  private final int maxItemSize;
  private final long maxRequestDataBytes;

  private long untrustedDataBytes;
  private State state = State.LINE;
  private long bytesToSkip;
  private String command;
  private List<String> args;
  private int[] blockLengths;
  private List<byte[]> blocks;
  private boolean badChunk;

  /**
   * @param maxLineBytes the longest request line accepted, terminator included
   * @param maxItemSize the largest single data block accepted
   */
  public RequestDecoder(int maxLineBytes, int maxItemSize) {
    this(maxLineBytes, maxItemSize, 0);
  }

  /**
   * @param maxLineBytes the longest request line accepted, terminator included
   * @param maxItemSize the largest single data block accepted
   * @param untrustedDataBytes until {@link #trust()}, the most data one request may carry; {@code 0}: trusted from
   *     the start
   */
  public RequestDecoder(int maxLineBytes, int maxItemSize, int untrustedDataBytes) {
    this.untrustedDataBytes = untrustedDataBytes;
    this.maxLineBytes = maxLineBytes;
    this.maxItemSize = maxItemSize;
    // Batch commands carry several blocks; bound their sum so one request cannot pin
    // an unbounded amount of memory while it is being assembled.
    this.maxRequestDataBytes = 16L * maxItemSize;
  }

  /** Lifts the limits of a connection that has not logged in: it has. */
  public void trust() {
    untrustedDataBytes = 0;
  }

  private boolean trusted() {
    return untrustedDataBytes == 0;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    while (in.isReadable() && (trusted() || out.isEmpty())) {
      boolean progressed =
          switch (state) {
            case LINE -> readLine(in, out);
            case BLOCKS -> readBlock(in, out);
            case SKIP_LINE -> skipLine(in);
            case SKIP_BYTES -> skipBytes(in);
          };
      if (!progressed) {
        return;
      }
    }
  }

  private boolean readLine(ByteBuf in, List<Object> out) {
    int lineLimit = trusted() ? maxLineBytes : (int) Math.min(maxLineBytes, untrustedDataBytes);
    int searchEnd = Math.min(in.writerIndex(), in.readerIndex() + lineLimit);
    int newline = in.indexOf(in.readerIndex(), searchEnd, (byte) '\n');
    if (newline < 0) {
      if (in.readableBytes() >= lineLimit) {
        out.add(FramingError.clientError("line too long"));
        state = State.SKIP_LINE;
        return true;
      }
      return false;
    }
    int lineEnd =
        newline > in.readerIndex() && in.getByte(newline - 1) == '\r' ? newline - 1 : newline;
    String line =
        in.toString(in.readerIndex(), lineEnd - in.readerIndex(), StandardCharsets.ISO_8859_1);
    in.readerIndex(newline + 1);
    List<String> words = splitWords(line);
    if (words.isEmpty()) {
      out.add(new Request("", List.of(), List.of()));
      return true;
    }
    String cmd = words.get(0);
    List<String> rest = words.subList(1, words.size());
    int[] lengths;
    try {
      lengths = DataBlockLayout.blockLengths(cmd, rest);
    } catch (MalformedRequestException e) {
      out.add(FramingError.clientError(e.getMessage()));
      return true;
    }
    long total = 0;
    boolean oversized = false;
    for (int length : lengths) {
      total += length + 2L;
      oversized |= length > maxItemSize;
    }
    if (!trusted() && total - 2L * lengths.length > untrustedDataBytes) {
      out.add(
          FramingError.clientErrorClosing(
              "data block too large before login (more than " + untrustedDataBytes + " bytes)"));
      bytesToSkip = Long.MAX_VALUE; // the connection is closing: read nothing more into memory
      state = State.SKIP_BYTES;
      return true;
    }
    if (oversized || total > maxRequestDataBytes) {
      // SERVER_ERROR, as memcached answers: the request is well formed, the server will not hold
      // it. A client
      // reads a CLIENT_ERROR to a request with data as a sign its data may have been read as
      // commands.
      out.add(FramingError.serverError("object too large for cache"));
      bytesToSkip = total;
      state = State.SKIP_BYTES;
      return true;
    }
    if (lengths.length == 0) {
      out.add(new Request(cmd, rest, List.of()));
      return true;
    }
    command = cmd;
    args = new ArrayList<>(rest);
    blockLengths = lengths;
    blocks = new ArrayList<>(lengths.length);
    badChunk = false;
    state = State.BLOCKS;
    return true;
  }

  private boolean readBlock(ByteBuf in, List<Object> out) {
    int length = blockLengths[blocks.size()];
    if (in.readableBytes() < length + 2) {
      return false;
    }
    byte[] data = new byte[length];
    in.readBytes(data);
    badChunk |= in.readByte() != '\r' | in.readByte() != '\n';
    blocks.add(data);
    if (blocks.size() == blockLengths.length) {
      out.add(
          badChunk
              ? FramingError.clientError("bad data chunk")
              : new Request(command, args, blocks));
      command = null;
      args = null;
      blocks = null;
      state = State.LINE;
    }
    return true;
  }

  private boolean skipLine(ByteBuf in) {
    int newline = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) '\n');
    if (newline < 0) {
      in.skipBytes(in.readableBytes());
      return false;
    }
    in.readerIndex(newline + 1);
    state = State.LINE;
    return true;
  }

  private boolean skipBytes(ByteBuf in) {
    int n = (int) Math.min(bytesToSkip, in.readableBytes());
    in.skipBytes(n);
    bytesToSkip -= n;
    if (bytesToSkip > 0) {
      return false;
    }
    state = State.LINE;
    return true;
  }

  /** Splits on runs of spaces, as memcached's tokenizer does. */
  private static List<String> splitWords(String line) {
    List<String> words = new ArrayList<>();
    int i = 0;
    int n = line.length();
    while (i < n) {
      while (i < n && line.charAt(i) == ' ') {
        i++;
      }
      int start = i;
      while (i < n && line.charAt(i) != ' ') {
        i++;
      }
      if (i > start) {
        words.add(line.substring(start, i));
      }
    }
    return words;
  }
}
