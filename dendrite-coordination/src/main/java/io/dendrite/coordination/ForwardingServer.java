package io.dendrite.coordination;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslHandler;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a process takes the requests other processes forward to it as a range's owner. Operations are registered
 * by name, the same in every process of the service (a lambda cannot travel; its name can). A request is refused
 * without running when this process does not own the range under the epoch the caller named ({@code NOT_OWNER}: the
 * caller finds the owner again), when the queue is full ({@code BUSY}), or when it waited past its deadline; it runs
 * on a bounded pool, never on a network thread. A connection that sends a malformed or oversized frame is closed;
 * the others go on.
 *
 * <p>Every connection first passes the handshake of the service's {@link ForwardingSecurity} (through TLS when it
 * says so): one that does not prove the shared secret is refused and closed before anything it sent runs.
 */
public final class ForwardingServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ForwardingServer.class);

  /** What a forwarded request runs at the owner. */
  @FunctionalInterface
  public interface Operation {
    /** Runs the request on {@code range}; what it returns is the caller's result, what it throws its failure. */
    byte[] run(String range, byte[] body) throws Exception;
  }

  /** Whether this process owns a range under an epoch: {@link ZooKeeperOwnership#owns}. */
  @FunctionalInterface
  public interface Ownership {
    boolean owns(String range, long epoch);
  }

  private final Map<String, Operation> operations = new ConcurrentHashMap<>();
  private final Ownership ownership;
  private final ThreadPoolExecutor pool;
  private final EventLoopGroup group;
  private final Channel channel;
  private final String host;
  private final ForwardingSecurity security;
  private final java.util.concurrent.atomic.AtomicBoolean closed =
      new java.util.concurrent.atomic.AtomicBoolean();

  private ForwardingServer(Builder builder) {
    this.ownership = builder.ownership;
    this.host = builder.host;
    this.security = builder.security;
    this.pool =
        new ThreadPoolExecutor(
            builder.threads,
            builder.threads,
            0,
            TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(builder.maxQueued),
            runnable -> {
              Thread thread = new Thread(runnable, "dendrite-forwarded");
              thread.setDaemon(true);
              return thread;
            });
    this.group = new NioEventLoopGroup(2);
    try {
      this.channel =
          new ServerBootstrap()
              .group(group)
              .channel(NioServerSocketChannel.class)
              .childOption(ChannelOption.TCP_NODELAY, true)
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      if (security.serverTls() != null) {
                        SSLEngine engine = security.serverTls().createSSLEngine();
                        engine.setUseClientMode(false);
                        ch.pipeline().addLast(new SslHandler(engine));
                      }
                      ForwardingFrames.frame(
                          ch.pipeline(),
                          new ForwardingHandshake.ServerSide(security),
                          new RequestHandler());
                    }
                  })
              .bind(builder.host, builder.port)
              .syncUninterruptibly()
              .channel();
    } catch (
        Exception e) { // syncUninterruptibly rethrows a bind's BindException unchecked, undeclared
      group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      pool.shutdownNow();
      throw new IllegalStateException(
          "cannot listen on " + builder.host + ":" + builder.port + " for forwarded requests: " + e,
          e);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Registers {@code operation} under {@code name}; every process of the service registers the same names. */
  public ForwardingServer register(String name, Operation operation) {
    if (operations.putIfAbsent(Objects.requireNonNull(name, "name"), operation) != null) {
      throw new IllegalStateException("operation registered twice: " + name);
    }
    return this;
  }

  /** {@code host:port}, what this process joins its coordinator with as its endpoint. */
  public String endpoint() {
    return host + ":" + port();
  }

  public int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    pool.shutdownNow();
  }

  private final class RequestHandler extends SimpleChannelInboundHandler<ByteBuf> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
      ForwardingFrames.Request request = ForwardingFrames.readRequest(frame);
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(request.millisLeft());
      Operation operation = operations.get(request.operation());
      if (operation == null) {
        reply(ctx, request, ForwardingException.Reason.UNKNOWN_OPERATION, request.operation());
        return;
      }
      if (!ownership.owns(request.range(), request.epoch())) {
        reply(ctx, request, ForwardingException.Reason.NOT_OWNER, notOwner(request));
        return;
      }
      try {
        pool.execute(() -> run(ctx, request, operation, deadline));
      } catch (RejectedExecutionException full) {
        reply(ctx, request, ForwardingException.Reason.BUSY, "forwarded-request queue full");
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.debug(
          "closing forwarding connection {}: {}", ctx.channel().remoteAddress(), cause.toString());
      ctx.close();
    }
  }

  private void run(
      ChannelHandlerContext ctx,
      ForwardingFrames.Request request,
      Operation operation,
      long deadline) {
    if (System.nanoTime() - deadline > 0) {
      reply(
          ctx,
          request,
          ForwardingException.Reason.DEADLINE_PASSED,
          "waited past its deadline, not run");
      return;
    }
    // Looked at again: ownership may have moved while the request waited in the queue.
    if (!ownership.owns(request.range(), request.epoch())) {
      reply(ctx, request, ForwardingException.Reason.NOT_OWNER, notOwner(request));
      return;
    }
    byte[] result;
    try {
      result = operation.run(request.range(), request.body());
    } catch (ForwardingException notServed) {
      reply(ctx, request, notServed.reason(), String.valueOf(notServed.getMessage()));
      return;
    } catch (Exception | AssertionError failed) {
      reply(ctx, request, ForwardingException.Reason.FAILED, String.valueOf(failed));
      return;
    }
    send(ctx, new ForwardingFrames.Reply(request.id(), ForwardingFrames.OK, result));
  }

  private static String notOwner(ForwardingFrames.Request request) {
    return "this process does not own " + request.range() + " under epoch " + request.epoch();
  }

  private static void reply(
      ChannelHandlerContext ctx,
      ForwardingFrames.Request request,
      ForwardingException.Reason reason,
      String message) {
    send(
        ctx,
        new ForwardingFrames.Reply(
            request.id(), reason.status(), message.getBytes(StandardCharsets.UTF_8)));
  }

  private static void send(ChannelHandlerContext ctx, ForwardingFrames.Reply reply) {
    ByteBuf out = ctx.alloc().buffer(10 + reply.body().length);
    ForwardingFrames.writeReply(out, reply);
    ctx.writeAndFlush(out);
  }

  private static boolean isLoopback(String host) {
    try {
      for (InetAddress address : InetAddress.getAllByName(host)) {
        if (!address.isLoopbackAddress()) {
          return false;
        }
      }
      return true;
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("cannot resolve the forwarding host " + host, e);
    }
  }

  /** Settings of a {@link ForwardingServer}; the ownership check and the security are required. */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port;
    private Ownership ownership;
    private int threads = 4;
    private int maxQueued = 1024;
    private ForwardingSecurity security;

    private Builder() {}

    /**
     * Who may send requests here, and whether through TLS. Required: {@link ForwardingSecurity#sharedSecret}, or
     * {@link ForwardingSecurity#unauthenticatedOnLoopback} for a loopback {@link #host}.
     */
    public Builder security(ForwardingSecurity security) {
      this.security = Objects.requireNonNull(security, "security");
      return this;
    }

    /** The address to listen on and to announce (default 127.0.0.1). */
    public Builder host(String host) {
      this.host = Objects.requireNonNull(host, "host");
      return this;
    }

    /** The port (default 0: an ephemeral one). */
    public Builder port(int port) {
      if (port < 0 || port > 65_535) {
        throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
      }
      this.port = port;
      return this;
    }

    public Builder ownership(Ownership ownership) {
      this.ownership = Objects.requireNonNull(ownership, "ownership");
      return this;
    }

    /** Threads that run forwarded requests (default 4). */
    public Builder threads(int threads) {
      if (threads < 1) {
        throw new IllegalArgumentException("threads must be at least 1, got " + threads);
      }
      this.threads = threads;
      return this;
    }

    /** Forwarded requests that may wait for a thread (default 1024); past it they are refused as busy. */
    public Builder maxQueued(int maxQueued) {
      if (maxQueued < 1) {
        throw new IllegalArgumentException("maxQueued must be at least 1, got " + maxQueued);
      }
      this.maxQueued = maxQueued;
      return this;
    }

    /**
     * @throws IllegalStateException when the security is missing, or is unauthenticated on an address that is not a
     *     loopback one
     */
    public ForwardingServer start() {
      Objects.requireNonNull(ownership, "ownership");
      if (security == null) {
        throw new IllegalStateException(
            "forwarding security is required: give every process of the service the same "
                + "ForwardingSecurity.sharedSecret(...), or ForwardingSecurity.unauthenticatedOnLoopback() when"
                + " they all run on one machine ("
                + ForwardingHandshake.SETTING
                + ")");
      }
      if (!security.authenticated() && !isLoopback(host)) {
        throw new IllegalStateException(
            "forwarding without a secret listens on loopback addresses only, got "
                + host
                + ": anyone who reaches "
                + host
                + " could run the service's writes; set "
                + ForwardingHandshake.SETTING);
      }
      return new ForwardingServer(this);
    }
  }
}
