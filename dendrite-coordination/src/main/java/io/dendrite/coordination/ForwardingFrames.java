package io.dendrite.coordination;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import java.nio.charset.StandardCharsets;

/**
 * The frames forwarded requests and replies travel in, each behind a 4-byte length, after the handshake's frames
 * ({@link ForwardingHandshake}). A request: {@code 'Q'}, id
 * (long), the milliseconds left before its deadline (int), operation, range (each a short length and UTF-8), the
 * epoch the caller believes the owner holds (long), then the body. A reply: {@code 'R'}, id, a status byte, then
 * the result (OK) or a UTF-8 message.
 */
final class ForwardingFrames {
  private ForwardingFrames() {}

  /** The largest frame either side accepts: bodies are commands and result sets, not bulk data. */
  static final int MAX_FRAME_BYTES = 16 << 20;

  static final byte REQUEST = 'Q';
  static final byte REPLY = 'R';

  static final byte OK = 0;

  /**
   * Frames {@code pipeline} both ways (a 4-byte length before each frame), then hands frames to {@code handlers}, in
   * order: the handshake ({@link ForwardingHandshake}), then requests or replies.
   */
  static void frame(ChannelPipeline pipeline, ChannelHandler... handlers) {
    pipeline.addLast(
        new LengthFieldBasedFrameDecoder(MAX_FRAME_BYTES, 0, 4, 0, 4), new LengthFieldPrepender(4));
    pipeline.addLast(handlers);
  }

  record Request(
      long id, int millisLeft, String operation, String range, long epoch, byte[] body) {}

  record Reply(long id, byte status, byte[] body) {}

  static void writeRequest(ByteBuf out, Request request) {
    out.writeByte(REQUEST);
    out.writeLong(request.id());
    out.writeInt(request.millisLeft());
    writeText(out, request.operation());
    writeText(out, request.range());
    out.writeLong(request.epoch());
    out.writeBytes(request.body());
  }

  static void writeReply(ByteBuf out, Reply reply) {
    out.writeByte(REPLY);
    out.writeLong(reply.id());
    out.writeByte(reply.status());
    out.writeBytes(reply.body());
  }

  /** @throws CorruptedFrameException when the frame is not a well-formed request */
  static Request readRequest(ByteBuf frame) {
    require(
        frame.readableBytes() >= 1 + 8 + 4 && frame.readByte() == REQUEST, "not a request frame");
    long id = frame.readLong();
    int millisLeft = frame.readInt();
    String operation = readText(frame);
    String range = readText(frame);
    require(frame.readableBytes() >= 8, "request frame ends before its epoch");
    long epoch = frame.readLong();
    byte[] body = new byte[frame.readableBytes()];
    frame.readBytes(body);
    return new Request(id, millisLeft, operation, range, epoch, body);
  }

  /** @throws CorruptedFrameException when the frame is not a well-formed reply */
  static Reply readReply(ByteBuf frame) {
    require(frame.readableBytes() >= 1 + 8 + 1 && frame.readByte() == REPLY, "not a reply frame");
    long id = frame.readLong();
    byte status = frame.readByte();
    byte[] body = new byte[frame.readableBytes()];
    frame.readBytes(body);
    return new Reply(id, status, body);
  }

  private static void writeText(ByteBuf out, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > Short.MAX_VALUE) {
      throw new IllegalArgumentException("name too long: " + bytes.length + " bytes");
    }
    out.writeShort(bytes.length);
    out.writeBytes(bytes);
  }

  private static String readText(ByteBuf frame) {
    require(frame.readableBytes() >= 2, "frame ends before a name's length");
    int length = frame.readShort();
    require(length >= 0 && frame.readableBytes() >= length, "frame ends inside a name");
    byte[] bytes = new byte[length];
    frame.readBytes(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  private static void require(boolean condition, String problem) {
    if (!condition) {
      throw new CorruptedFrameException(problem);
    }
  }
}
