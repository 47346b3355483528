package io.dendrite.iq.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.nio.charset.StandardCharsets;

/**
 * Counts connections and turns away those beyond {@code maxConnections}, as memcached does; but while a connection
 * waits to log in, a new one takes its slot (see {@link PendingLogins}), so that strangers cannot lock clients out.
 */
@ChannelHandler.Sharable
final class ConnectionLimit extends ChannelInboundHandlerAdapter {

  private final ServerStats stats;
  private final int maxConnections;
  private final PendingLogins pendingLogins;

  ConnectionLimit(ServerStats stats, int maxConnections, PendingLogins pendingLogins) {
    this.stats = stats;
    this.maxConnections = maxConnections;
    this.pendingLogins = pendingLogins;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    stats.totalConnections.increment();
    stats.openChannels.add(ctx.channel());
    if (stats.currentConnections.incrementAndGet() > maxConnections
        && !pendingLogins.evictOldest(ctx.channel())) {
      stats.rejectedConnections.increment();
      ctx.writeAndFlush(
              Unpooled.copiedBuffer(
                  "ERROR Too many open connections\r\n", StandardCharsets.US_ASCII))
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    ctx.fireChannelActive();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    stats.currentConnections.decrementAndGet();
    stats.openChannels.remove(ctx.channel());
    ctx.fireChannelInactive();
  }
}
