package io.dendrite.coordination;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends requests to the owners of ranges ({@link ForwardingServer}): one pipelined connection per owner, opened on
 * first use and again after it drops. Every call has a deadline, which travels with the request (the owner does not
 * run what has waited past it) and bounds the wait here. A connection that drops fails its outstanding requests as
 * {@link ForwardingException.Reason#OWNER_UNREACHABLE}; the caller looks the owner up again and retries.
 */
public final class ForwardingClient implements AutoCloseable {
  private static final int CONNECT_TIMEOUT_MILLIS = 2_000;

  private final EventLoopGroup group = new NioEventLoopGroup(1);
  private final Map<String, CompletableFuture<Connection>> connections = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();

  /**
   * Runs {@code operation} on {@code range} at the process at {@code endpoint}, which the caller believes owns the
   * range under {@code epoch}.
   *
   * @return the operation's result, or a failure with a {@link ForwardingException}
   */
  public CompletableFuture<byte[]> call(
      String endpoint, String operation, String range, long epoch, byte[] body, Duration timeout) {
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    long millis = Math.max(1, timeout.toMillis());
    connection(endpoint)
        .whenComplete(
            (connection, unreachable) -> {
              if (unreachable != null) {
                result.completeExceptionally(
                    new ForwardingException(
                        ForwardingException.Reason.OWNER_UNREACHABLE,
                        "cannot connect to " + endpoint,
                        unreachable));
                return;
              }
              connection.send(
                  new ForwardingFrames.Request(
                      ids.incrementAndGet(),
                      (int) Math.min(Integer.MAX_VALUE, millis),
                      operation,
                      range,
                      epoch,
                      body),
                  result,
                  millis);
            });
    return result;
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private CompletableFuture<Connection> connection(String endpoint) {
    CompletableFuture<Connection> existing = connections.get(endpoint);
    if (existing != null && !(existing.isDone() && existing.isCompletedExceptionally())) {
      return existing;
    }
    CompletableFuture<Connection> fresh = new CompletableFuture<>();
    CompletableFuture<Connection> raced =
        existing == null
            ? connections.putIfAbsent(endpoint, fresh)
            : (connections.replace(endpoint, existing, fresh) ? null : connections.get(endpoint));
    if (raced != null) {
      return raced;
    }
    int colon = endpoint.lastIndexOf(':');
    if (colon <= 0) {
      fresh.completeExceptionally(
          new IllegalArgumentException("endpoint must be host:port: " + endpoint));
      return fresh;
    }
    Connection connection = new Connection(endpoint);
    ChannelFuture connecting =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ForwardingFrames.frame(ch.pipeline(), connection);
                  }
                })
            .connect(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1)));
    connecting.addListener(
        done -> {
          if (done.isSuccess()) {
            connection.channel = connecting.channel();
            fresh.complete(connection);
          } else {
            connections.remove(endpoint, fresh);
            fresh.completeExceptionally(done.cause());
          }
        });
    return fresh;
  }

  /** One owner's connection and the requests outstanding on it. */
  private final class Connection extends SimpleChannelInboundHandler<ByteBuf> {
    private final String endpoint;
    private final Map<Long, CompletableFuture<byte[]>> outstanding = new ConcurrentHashMap<>();
    private volatile Channel channel;

    Connection(String endpoint) {
      this.endpoint = endpoint;
    }

    void send(ForwardingFrames.Request request, CompletableFuture<byte[]> result, long millis) {
      outstanding.put(request.id(), result);
      channel
          .eventLoop()
          .schedule(
              () -> {
                if (outstanding.remove(request.id(), result)) {
                  result.completeExceptionally(
                      new ForwardingException(
                          ForwardingException.Reason.TIMED_OUT,
                          "no reply from " + endpoint + " within " + millis + " ms"));
                }
              },
              millis,
              TimeUnit.MILLISECONDS);
      ByteBuf out = channel.alloc().buffer();
      ForwardingFrames.writeRequest(out, request);
      channel
          .writeAndFlush(out)
          .addListener(
              written -> {
                if (!written.isSuccess() && outstanding.remove(request.id(), result)) {
                  result.completeExceptionally(
                      new ForwardingException(
                          ForwardingException.Reason.OWNER_UNREACHABLE,
                          "could not send to " + endpoint,
                          written.cause()));
                }
              });
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
      ForwardingFrames.Reply reply = ForwardingFrames.readReply(frame);
      CompletableFuture<byte[]> result = outstanding.remove(reply.id());
      if (result == null) {
        return; // timed out here already
      }
      if (reply.status() == ForwardingFrames.OK) {
        result.complete(reply.body());
        return;
      }
      ForwardingException.Reason reason = ForwardingException.Reason.ofStatus(reply.status());
      result.completeExceptionally(
          new ForwardingException(
              reason, endpoint + ": " + new String(reply.body(), StandardCharsets.UTF_8)));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      connections
          .values()
          .removeIf(
              future ->
                  future.isDone() && !future.isCompletedExceptionally() && future.join() == this);
      for (Long id : outstanding.keySet()) {
        CompletableFuture<byte[]> result = outstanding.remove(id);
        if (result != null) {
          result.completeExceptionally(
              new ForwardingException(
                  ForwardingException.Reason.CONNECTION_LOST,
                  "the connection to " + endpoint + " dropped with the request outstanding"));
        }
      }
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
