package io.dendrite.iq.server;

import io.dendrite.iq.protocol.FramingError;
import io.dendrite.iq.protocol.Request;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs decoded requests and writes their replies. Replies of one read burst are gathered in one
 * buffer and flushed together, so pipelined clients get few syscalls. When the peer stops reading
 * its replies, reading from it is paused until the outbound buffer drains, so a client that never
 * reads cannot make the server buffer without bound.
 */
final class RequestHandler extends ChannelInboundHandlerAdapter {

  private static final Logger LOG = LoggerFactory.getLogger(RequestHandler.class);

  private final CommandTable commands;
  private ByteBuf pending;

  RequestHandler(CommandTable commands) {
    this.commands = commands;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (pending == null) {
      pending = ctx.alloc().buffer();
    }
    ReplyWriter out = new ReplyWriter(pending);
    if (msg instanceof FramingError error) {
      out.error("CLIENT_ERROR " + error.reason());
    } else if (msg instanceof Request request) {
      if (request.command().equals("quit")) {
        flush(ctx).addListener(ChannelFutureListener.CLOSE);
        return;
      }
      commands.execute(request, out);
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    flush(ctx);
    if (!ctx.channel().isWritable()) {
      ctx.channel().config().setAutoRead(false);
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable()) {
      ctx.channel().config().setAutoRead(true);
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (pending != null) {
      pending.release();
      pending = null;
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("closing {} after {}", ctx.channel().remoteAddress(), cause.toString());
    ctx.close();
  }

  private io.netty.channel.ChannelFuture flush(ChannelHandlerContext ctx) {
    ByteBuf out = pending;
    pending = null;
    if (out == null || !out.isReadable()) {
      if (out != null) {
        out.release();
      }
      return ctx.newSucceededFuture();
    }
    return ctx.writeAndFlush(out);
  }
}
