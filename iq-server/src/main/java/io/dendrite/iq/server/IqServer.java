package io.dendrite.iq.server;

import io.dendrite.iq.protocol.RequestDecoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.ReadTimeoutHandler;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A memcached-compatible cache server with IQ-Twemcached's I/Q lease and session commands, to embed
 * in a process or run from {@link IqServerMain}.
 *
 * <pre>{@code
 * try (IqServer server = IqServer.start(IqServerConfig.builder().port(0).build())) {
 *     int port = server.port();
 *     ...
 * }
 * }</pre>
 */
public final class IqServer implements AutoCloseable {
  /** The key prefix of Dendrite's range log records (its {@code CacheKeys}), pinned but not buffered writes. */
  private static final String RANGE_LOG_PREFIX = "dl:";

  private static final Logger LOG = LoggerFactory.getLogger(IqServer.class);

  /** Longest request line; enough for a batch command naming a couple of hundred full-length keys. */
  private static final int MAX_LINE_BYTES = 64 * 1024;

  /** The most data a request may carry before its connection has logged in: a login needs far less. */
  static final int MAX_LOGIN_BYTES = 4096;

  private final EventLoopGroup acceptor;
  private final EventLoopGroup workers;
  private final Channel serverChannel;
  private final int port;
  private final ServerState state;

  private IqServer(
      EventLoopGroup acceptor, EventLoopGroup workers, Channel serverChannel, ServerState state) {
    this.acceptor = acceptor;
    this.workers = workers;
    this.serverChannel = serverChannel;
    this.state = state;
    this.port = ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  /**
   * Binds and starts serving; returns once the listening socket is bound.
   *
   * @throws IllegalStateException if the address cannot be bound
   */
  public static IqServer start(IqServerConfig config) {
    boolean epoll = config.epoll() && Epoll.isAvailable();
    EventLoopGroup acceptor = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
    EventLoopGroup workers =
        epoll ? new EpollEventLoopGroup(config.threads()) : new NioEventLoopGroup(config.threads());
    ServerState state = new ServerState(config, System::currentTimeMillis, workers);
    CommandTable commands = new CommandTable(state.stats, state.handover);
    new StandardCommands(state).registerAll(commands);
    new LeaseCommands(state).registerAll(commands);
    new SessionCommands(state).registerAll(commands);
    new MarkerCommands(state).registerAll(commands);
    ConnectionLimit connectionLimit =
        new ConnectionLimit(state.stats, config.maxConnections(), state.pendingLogins);
    try {
      Channel channel =
          new ServerBootstrap()
              .group(acceptor, workers)
              .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
              .option(ChannelOption.SO_BACKLOG, 1024)
              // A restarted server takes its address back at once, connections of its last run in
              // TIME_WAIT or not.
              .option(ChannelOption.SO_REUSEADDR, true)
              .childOption(ChannelOption.TCP_NODELAY, true)
              // Replies a peer has not read: past the high mark the handler stops running its
              // requests and reading from it, until the buffer drains below the low mark.
              .childOption(
                  ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      if (config.tls() != null) {
                        SSLEngine engine = config.tls().createSSLEngine();
                        engine.setUseClientMode(false);
                        ch.pipeline().addLast(new SslHandler(engine));
                      }
                      ch.pipeline().addLast(connectionLimit);
                      if (!config.idleTimeout().isZero()) {
                        ch.pipeline()
                            .addLast(
                                new ReadTimeoutHandler(
                                    config.idleTimeout().toMillis(), TimeUnit.MILLISECONDS));
                      }
                      // Before a login only the login's own set is read: a connection that has not
                      // logged in
                      // can make the server buffer no more than this.
                      RequestDecoder decoder =
                          new RequestDecoder(
                              MAX_LINE_BYTES,
                              config.maxItemSize(),
                              config.credentials().required() ? MAX_LOGIN_BYTES : 0);
                      ch.pipeline().addLast(decoder, new RequestHandler(commands, state, decoder));
                    }
                  })
              .bind(config.listenAddress(), config.port())
              .syncUninterruptibly()
              .channel();
      long sweepMillis = Math.max(50, Math.min(1000, config.leaseLifetime().toMillis() / 4));
      workers.scheduleAtFixedRate(state::sweep, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS);
      IqServer server = new IqServer(acceptor, workers, channel, state);
      LOG.info(
          "IQ server listening on {}:{} (lease {} ms, memory {} B, pinned {} B, {}, login {}, {})",
          config.listenAddress(),
          server.port,
          config.leaseLifetime().toMillis(),
          config.memoryBytes(),
          config.pinnedMemoryBytes(),
          epoll ? "epoll" : "nio",
          config.credentials().required() ? "required" : "not required",
          config.tls() != null ? "TLS" : "plain TCP");
      if (!config.credentials().required() && !isLoopback(config.listenAddress())) {
        LOG.warn(
            "listening on {} without --auth-file: any client that reaches it can read, change and"
                + " delete every key",
            config.listenAddress());
      }
      return server;
    } catch (RuntimeException e) {
      acceptor.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      workers.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw new IllegalStateException(
          "cannot start IQ server on " + config.listenAddress() + ":" + config.port(), e);
    }
  }

  private static boolean isLoopback(String address) {
    try {
      return java.net.InetAddress.getByName(address).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  /** The bound port; the real one when the configuration asked for port 0. */
  public int port() {
    return port;
  }

  /**
   * What {@link #leave} found: how many pinned items the server held when it began to leave, how many connections
   * that stored pinned items here confirmed ({@code pmoved}) that their replicas are copied to other servers, how
   * many closed first (done too), how many did not confirm by the deadline, how many pinned items stay without a
   * confirmed copy elsewhere (every one the server holds when any connection did not confirm: it does not know
   * whose they are), and how long it took.
   */
  public record HandoverReport(
      long pinnedItems,
      int confirmed,
      int closed,
      int unconfirmed,
      long unconfirmedPinnedItems,
      Duration took) {

    /** Whether every client that stored pinned items here confirmed its copies or closed before the deadline. */
    public boolean complete() {
      return unconfirmed == 0;
    }

    @Override
    public String toString() {
      String seconds = String.format(java.util.Locale.ROOT, "%.1f s", took.toMillis() / 1000.0);
      if (pinnedItems == 0) {
        return "nothing to hand over: no pinned items";
      }
      return complete()
          ? "handed over: " + confirmed + " clients confirmed, " + closed + " closed, in " + seconds
          : "handover incomplete after "
              + seconds
              + ": "
              + unconfirmed
              + " clients did not confirm ("
              + confirmed
              + " confirmed, "
              + closed
              + " closed); "
              + unconfirmedPinnedItems
              + " pinned items without a confirmed copy elsewhere";
    }
  }

  /**
   * Hands over before a stop: announces that this server is leaving ({@code stats leaving 1}; no new Q lease on a
   * pinned item) and keeps serving until every client that stored pinned items here confirmed ({@code pmoved}) that
   * it copied its replicas to the servers that replace this one, or closed its connection; or until {@code
   * deadline} has passed, whichever comes first. Write-back's replica repair takes the server out of placement,
   * copies, and confirms. Returns at once when nothing is pinned here or the deadline is zero. Logs what happened,
   * a warning when some client did not confirm, and returns it.
   *
   * @throws InterruptedException when interrupted while waiting: the caller stops now, without the rest
   */
  public HandoverReport leave(Duration deadline) throws InterruptedException {
    long started = System.nanoTime();
    long pinned = state.items.pinnedItemCount();
    if (pinned == 0 || deadline.isZero()) {
      return new HandoverReport(pinned, 0, 0, 0, pinned, Duration.ZERO);
    }
    state.handover.leave(); // before clients can see leaving 1 and confirm
    state.leaving = true;
    LOG.info(
        "IQ server on port {} is leaving: waiting up to {} for {} clients to confirm that its {} pinned items are"
            + " copied to other servers",
        port,
        deadline,
        state.handover.unconfirmed(),
        pinned);
    Handover.Outcome outcome =
        state.handover.awaitConfirmations(started + deadline.toNanos(), System::nanoTime);
    HandoverReport report =
        new HandoverReport(
            pinned,
            outcome.confirmed(),
            outcome.closed(),
            outcome.unconfirmed(),
            outcome.unconfirmed() == 0 ? 0 : state.items.pinnedItemCount(),
            Duration.ofNanos(System.nanoTime() - started));
    if (report.complete()) {
      LOG.info("IQ server on port {} {}", port, report);
    } else {
      LOG.warn(
          "IQ server on port {} stops without a full handover (deadline {}): {}; their copies may be lost"
              + " with the next server lost",
          port,
          deadline,
          report);
    }
    return report;
  }

  /**
   * Stops accepting, lets in-flight replies drain briefly, then closes every connection. Says how many pinned
   * items (buffered writes, their logs) went with it: they survive only where clients keep other replicas, and a
   * client's replica repair writes them back once a server answers on this address again.
   */
  @Override
  public void close() {
    serverChannel.close().syncUninterruptibly();
    acceptor.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    workers.shutdownGracefully(100, 2_000, TimeUnit.MILLISECONDS).syncUninterruptibly();
    long pinned = state.items.pinnedItemCount();
    // Dendrite's range logs (dl:) describe the cached results on the servers; one lost with its
    // server's results costs a successor misses, no data: worth a line, not a warning.
    long rangeLogs = state.items.pinnedItemsUnder(RANGE_LOG_PREFIX);
    if (pinned > rangeLogs) {
      LOG.warn(
          "IQ server on port {} stopped holding {} pinned items ({} B, {} of them range logs): they are"
              + " lost here; only the other replicas clients keep of them remain",
          port,
          pinned,
          state.items.pinnedBytes(),
          rangeLogs);
    } else if (rangeLogs > 0) {
      LOG.info(
          "IQ server on port {} stopped; its {} range log records went with the cached results they list",
          port,
          rangeLogs);
    } else {
      LOG.info("IQ server on port {} stopped", port);
    }
  }
}
