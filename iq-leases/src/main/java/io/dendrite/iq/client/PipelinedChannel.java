package io.dendrite.iq.client;

import io.dendrite.iq.protocol.MalformedReplyException;
import io.dendrite.iq.protocol.Reply;
import io.dendrite.iq.protocol.ReplyParser;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One connection with many requests in flight. memcached answers in request order, so replies are
 * matched to requests first-in first-out. Any thread may {@link #send}; requests are queued and
 * written by the event loop in batches, which is the only place the in-flight order is decided.
 */
final class PipelinedChannel extends ByteToMessageDecoder {

    private final ServerAddress address;
    private final Runnable onClosed;
    private final long requestTimeoutNanos;
    private final Queue<Command> outbound = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    /** Written, awaiting a reply; touched only on the event loop. */
    private final ArrayDeque<Command> inFlight = new ArrayDeque<>();
    private volatile Channel channel;
    private volatile Throwable closeCause;
    private ScheduledFuture<?> timeoutCheck;

    /**
     * @param requestTimeout how long the oldest request may wait for its reply before the
     *                       connection is considered dead
     * @param onClosed       run on the event loop when the connection is gone, before its requests fail
     */
    PipelinedChannel(ServerAddress address, Duration requestTimeout, Runnable onClosed) {
        this.address = address;
        this.requestTimeoutNanos = requestTimeout.toNanos();
        this.onClosed = onClosed;
    }

    boolean isOpen() {
        Channel c = channel;
        return c != null && c.isActive();
    }

    void send(Command command) {
        outbound.add(command);
        if (drainScheduled.compareAndSet(false, true)) {
            try {
                channel.eventLoop().execute(this::drain);
            } catch (RejectedExecutionException e) {
                failAll(new IqConnectionException("client closed", e));
            }
        }
    }

    void close() {
        Channel c = channel;
        if (c != null) {
            c.close();
        }
    }

    private void drain() {
        drainScheduled.set(false);
        if (!channel.isActive()) {
            failAll(lost());
            return;
        }
        ByteBuf batch = null;
        for (Command command = outbound.poll(); command != null; command = outbound.poll()) {
            if (batch == null) {
                batch = channel.alloc().ioBuffer();
            }
            batch.writeBytes(command.bytes);
            command.sentAtNanos = System.nanoTime();
            inFlight.add(command);
        }
        if (batch != null) {
            channel.writeAndFlush(batch).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        // One periodic check per connection instead of a timer per request: replies come in order,
        // so only the oldest request can be the first to run late.
        long period = Math.max(requestTimeoutNanos / 4, 1_000_000);
        timeoutCheck = ctx.executor().scheduleAtFixedRate(this::closeIfStalled, period, period, TimeUnit.NANOSECONDS);
    }

    private void closeIfStalled() {
        Command oldest = inFlight.peek();
        if (oldest != null && System.nanoTime() - oldest.sentAtNanos > requestTimeoutNanos) {
            // Later replies cannot overtake the missing one: the connection is useless now.
            closeCause = new TimeoutException("no reply from " + address + " within "
                    + Duration.ofNanos(requestTimeoutNanos));
            channel.close();
        }
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (in.isReadable()) {
            Command head = inFlight.peek();
            if (head == null) {
                throw new MalformedReplyException("reply bytes with no request outstanding");
            }
            Reply reply = ReplyParser.parse(in, head.format);
            if (reply == null) {
                return;
            }
            inFlight.poll();
            head.reply.complete(reply);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A reply we cannot parse means we can no longer pair replies with requests.
        closeCause = cause;
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        super.channelInactive(ctx);
        timeoutCheck.cancel(false);
        onClosed.run();
        failAll(lost());
    }

    private IqConnectionException lost() {
        return new IqConnectionException("connection to " + address + " lost", closeCause);
    }

    private void failAll(IqConnectionException cause) {
        for (Command command = inFlight.poll(); command != null; command = inFlight.poll()) {
            command.reply.completeExceptionally(cause);
        }
        for (Command command = outbound.poll(); command != null; command = outbound.poll()) {
            command.reply.completeExceptionally(cause);
        }
    }
}
