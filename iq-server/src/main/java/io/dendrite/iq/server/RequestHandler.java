package io.dendrite.iq.server;

import io.dendrite.iq.protocol.FramingError;
import io.dendrite.iq.protocol.MalformedRequestException;
import io.dendrite.iq.protocol.Request;
import io.dendrite.iq.protocol.RequestDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.ArrayDeque;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs decoded requests and writes their replies. Replies of one read burst are gathered in one buffer and flushed
 * together, so pipelined clients get few syscalls. What a client makes the server buffer is bounded three ways:
 *
 * <ul>
 *   <li>one request's reply by {@link #MAX_REPLY_BYTES} (a {@code get} naming a large value many times is refused
 *       with {@code SERVER_ERROR reply too large});
 *   <li>a burst's gathered replies by {@link #FLUSH_AT_BYTES}: past it they are written out before the next request
 *       runs;
 *   <li>replies the peer has not read by the channel's write-buffer water marks: once the outbound buffer is above
 *       the high mark, the requests still to run are held (they were decoded from one read, so they are few) and
 *       reading from the peer stops, until the buffer drains below the low mark.
 * </ul>
 */
final class RequestHandler extends ChannelInboundHandlerAdapter {

  /** The most one request's reply may take. */
  static final long MAX_REPLY_BYTES = 64L << 20;

  /** Gathered replies past this are written out before the next request runs. */
  static final int FLUSH_AT_BYTES = 256 << 10;

  private static final Logger LOG = LoggerFactory.getLogger(RequestHandler.class);

  private final CommandTable commands;
  private final RequestDecoder decoder;
  private final Credentials credentials;
  private final ServerState state;
  private final Queue<Object> held = new ArrayDeque<>();
  private ByteBuf pending;

  /** Who sent this connection's requests; {@code null} until it has logged in. */
  private Client client;

  /** The {@code fenced <name> <epoch>} guard for the next request, if one came. */
  private Request guard;

  /** Closes the connection if it has not logged in by then; {@code null} once it has, or with no login. */
  private ScheduledFuture<?> loginDeadline;

  RequestHandler(CommandTable commands, ServerState state, RequestDecoder decoder) {
    this.commands = commands;
    this.decoder = decoder;
    this.state = state;
    this.credentials = state.config.credentials();
    this.client = credentials.required() ? null : state.clients.connect(null);
  }

  /**
   * A connection that must log in gets until the login deadline to do it, and waits among the {@link PendingLogins},
   * which close the longest waiting when there are too many.
   */
  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    if (client == null) {
      state.pendingLogins.opened(ctx.channel());
      loginDeadline =
          ctx.executor()
              .schedule(
                  () -> {
                    state.stats.loginTimeouts.increment();
                    ctx.close();
                  },
                  state.config.loginTimeout().toMillis(),
                  TimeUnit.MILLISECONDS);
    }
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!held.isEmpty() || !ctx.channel().isWritable()) {
      held.add(msg);
      ctx.channel().config().setAutoRead(false);
      return;
    }
    run(ctx, msg);
  }

  private void run(ChannelHandlerContext ctx, Object msg) {
    if (pending == null) {
      pending = ctx.alloc().buffer();
    }
    ReplyWriter out = new ReplyWriter(pending, MAX_REPLY_BYTES);
    if (msg instanceof FramingError error) {
      guard = null;
      out.error(error.line());
      if (error.closes()) {
        held.clear();
        flush(ctx).addListener(ChannelFutureListener.CLOSE);
        return;
      }
    } else if (msg instanceof Request request) {
      if (request.command().equals("quit")) {
        held.clear();
        flush(ctx).addListener(ChannelFutureListener.CLOSE);
        return;
      }
      if (client == null) {
        logIn(ctx, request, out);
        return;
      }
      if (request.command().equals("fenced")) {
        guard = request; // no reply of its own: the guarded request's reply says how it went
      } else if (guard != null) {
        runGuarded(guard, request, out);
        guard = null;
      } else {
        commands.execute(request, client, out);
      }
    }
    if (pending.readableBytes() >= FLUSH_AT_BYTES) {
      flush(ctx);
    }
  }

  /**
   * Runs {@code request} only if the fence {@code guard} names stands at the epoch it names; otherwise the request
   * is answered {@code FENCED_OUT <fence's epoch>} (0: no fence here) and not run, {@code noreply} or not. A
   * malformed guard refuses the request too: it was meant to run guarded.
   */
  private void runGuarded(Request guard, Request request, ReplyWriter out) {
    // Read as the fence command reads its words: a name as a key, an epoch as an unsigned number.
    Arguments words = Arguments.of(guard, false, client);
    String name;
    long epoch;
    try {
      words.requireCount(2, 2);
      name = words.key(0);
      epoch = words.number(1);
    } catch (MalformedRequestException e) {
      epoch = -1;
      name = null;
    }
    if (epoch < 0) {
      out.error(
          "CLIENT_ERROR bad fence guard, expected fenced <name> <epoch>; the request did not run");
      return;
    }
    OptionalLong fencedAt =
        state.fences.runGuarded(name, epoch, () -> commands.execute(request, client, out));
    if (fencedAt.isPresent()) {
      out.error("FENCED_OUT " + fencedAt.getAsLong());
    }
  }

  /**
   * Before a connection has logged in, only memcached's login is served: a {@code set} of any key whose data is
   * {@code <user> <password>}. Anything else is refused; a wrong login closes the connection, so that each guess
   * costs a connection.
   */
  private void logIn(ChannelHandlerContext ctx, Request request, ReplyWriter out) {
    if (!request.command().equals("set") || request.blocks().size() != 1) {
      out.error("CLIENT_ERROR unauthenticated");
      return;
    }
    String user = credentials.userOf(request.blocks().get(0));
    if (user != null) {
      client = state.clients.connect(user);
      decoder.trust();
      endLoginWait(ctx);
      out.line("STORED");
      return;
    }
    out.error("CLIENT_ERROR authentication failure");
    held.clear();
    flush(ctx).addListener(ChannelFutureListener.CLOSE);
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
    while (ctx.channel().isWritable() && ctx.channel().isActive() && !held.isEmpty()) {
      run(ctx, held.poll());
    }
    flush(ctx);
    if (ctx.channel().isWritable() && held.isEmpty()) {
      ctx.channel().config().setAutoRead(true);
    }
    ctx.fireChannelWritabilityChanged();
  }

  private void endLoginWait(ChannelHandlerContext ctx) {
    state.pendingLogins.done(ctx.channel());
    if (loginDeadline != null) {
      loginDeadline.cancel(false);
      loginDeadline = null;
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    endLoginWait(ctx);
    held.clear();
    if (client != null) {
      state.closed(client);
    }
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

  private ChannelFuture flush(ChannelHandlerContext ctx) {
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
