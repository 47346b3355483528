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
import io.netty.handler.ssl.SslHandler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * Sends requests to the owners of ranges ({@link ForwardingServer}): one pipelined connection per owner, opened on
 * first use and again after it drops. Every call has a deadline, which travels with the request (the owner does not
 * run what has waited past it) and bounds the wait here. A connection that drops fails its outstanding requests as
 * {@link ForwardingException.Reason#OWNER_UNREACHABLE}; the caller looks the owner up again and retries.
 *
 * <p>A connection carries requests only once the owner proved, in the handshake of the service's {@link
 * ForwardingSecurity}, that it holds the shared secret (through TLS, trusting the owner's certificate, when it says
 * so). An owner that does not fails the calls as {@link ForwardingException.Reason#NOT_AUTHENTICATED}: nothing was
 * sent.
 */
public final class ForwardingClient implements AutoCloseable {
  private static final int CONNECT_TIMEOUT_MILLIS = 2_000;

  private final EventLoopGroup group = new NioEventLoopGroup(1);
  private final Map<String, CompletableFuture<Connection>> connections = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();
  private final ForwardingSecurity security;

  /** A client that connects as {@code security} says: the same settings as the service's servers. */
  public ForwardingClient(ForwardingSecurity security) {
    this.security = Objects.requireNonNull(security, "security");
  }

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
              if (unreachable instanceof ForwardingException refused) {
                result.completeExceptionally(refused);
                return;
              }
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
    String host = endpoint.substring(0, colon);
    int port = Integer.parseInt(endpoint.substring(colon + 1));
    CompletableFuture<Void> handshake = new CompletableFuture<>();
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
                    if (security.clientTls() != null) {
                      SSLEngine engine = security.clientTls().createSSLEngine(host, port);
                      engine.setUseClientMode(true);
                      // The owner's certificate must name the address connected to, as HTTPS checks
                      // it.
                      SSLParameters parameters = engine.getSSLParameters();
                      parameters.setEndpointIdentificationAlgorithm("HTTPS");
                      engine.setSSLParameters(parameters);
                      ch.pipeline().addLast(new SslHandler(engine));
                    }
                    ForwardingFrames.frame(
                        ch.pipeline(),
                        new ForwardingHandshake.ClientSide(security, endpoint, handshake),
                        connection);
                  }
                })
            .connect(host, port);
    connecting.addListener(
        done -> {
          if (done.isSuccess()) {
            connection.channel = connecting.channel();
          } else {
            handshake.completeExceptionally(done.cause());
          }
        });
    handshake.whenComplete(
        (ready, failed) -> {
          if (failed == null) {
            fresh.complete(connection);
          } else {
            connections.remove(endpoint, fresh);
            fresh.completeExceptionally(failed);
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
