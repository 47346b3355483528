package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The client's link to one server: a few pipelined connections, reopened on demand, and the
 * server's <em>epoch</em>.
 *
 * <p>The epoch moves forward every time a connection to the server is lost. Leases, staged values
 * and transaction records live only in the server's memory and its lease tokens restart at the same
 * number after a restart, so once a connection has dropped the client cannot prove that state it
 * created before still exists. Holders of server state remember the epoch they saw when they
 * created it and report {@link Outcome#STATE_LOST} if it has moved, instead of risking a token
 * that now matches somebody else's lease.
 */
final class ServerConnection {

    private final ServerAddress address;
    private final Bootstrap bootstrap;
    private final Duration requestTimeout;
    private final AtomicReferenceArray<CompletableFuture<PipelinedChannel>> slots;
    private final AtomicInteger nextSlot = new AtomicInteger();
    private final AtomicLong epoch = new AtomicLong();
    private final ThreadLocal<long[]> requestsOfThread;

    /** {@code requestsOfThread}: the sending thread's request count, shared by the client's connections. */
    ServerConnection(ServerAddress address, Bootstrap bootstrap, int connections, Duration requestTimeout,
                     ThreadLocal<long[]> requestsOfThread) {
        this.address = address;
        this.bootstrap = bootstrap;
        this.requestTimeout = requestTimeout;
        this.slots = new AtomicReferenceArray<>(connections);
        this.requestsOfThread = requestsOfThread;
    }

    ServerAddress address() {
        return address;
    }

    /** The current epoch; see the class comment. */
    long epoch() {
        return epoch.get();
    }

    /**
     * Sends a command on one of the connections. The future fails with {@link IqConnectionException}
     * if the connection is lost, including when the server stops answering for the request timeout.
     */
    CompletableFuture<Reply> send(Command command) {
        requestsOfThread.get()[0]++;
        CompletableFuture<PipelinedChannel> connection = connection(Math.floorMod(nextSlot.getAndIncrement(), slots.length()));
        PipelinedChannel ready = connection.isDone() && !connection.isCompletedExceptionally() ? connection.join() : null;
        if (ready != null) {
            ready.send(command);
        } else {
            connection.whenComplete((channel, failure) -> {
                if (failure != null) {
                    command.reply.completeExceptionally(
                            new IqConnectionException("cannot connect to " + address, failure));
                } else {
                    channel.send(command);
                }
            });
        }
        return command.reply;
    }

    /** Sends a command and waits for its reply. */
    Reply call(Command command) {
        return await(send(command));
    }

    /** Waits for a future of this package, turning its failures into {@link IqException}s. */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IqException("interrupted while waiting for a reply", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IqException iq) {
                throw iq;
            }
            throw new IqException("request failed", cause);
        }
    }

    void close() {
        for (int i = 0; i < slots.length(); i++) {
            CompletableFuture<PipelinedChannel> connection = slots.get(i);
            if (connection != null) {
                connection.thenAccept(PipelinedChannel::close);
            }
        }
    }

    private CompletableFuture<PipelinedChannel> connection(int slot) {
        CompletableFuture<PipelinedChannel> current = slots.get(slot);
        if (current != null && !isBroken(current)) {
            return current;
        }
        CompletableFuture<PipelinedChannel> fresh = new CompletableFuture<>();
        if (!slots.compareAndSet(slot, current, fresh)) {
            return slots.get(slot);
        }
        PipelinedChannel channel = new PipelinedChannel(address, requestTimeout, epoch::incrementAndGet);
        ChannelFuture connect = bootstrap.clone().handler(channel).connect(address.host(), address.port());
        connect.addListener(done -> {
            if (done.isSuccess()) {
                fresh.complete(channel);
            } else {
                fresh.completeExceptionally(done.cause());
            }
        });
        return fresh;
    }

    private static boolean isBroken(CompletableFuture<PipelinedChannel> connection) {
        return connection.isCompletedExceptionally() || (connection.isDone() && !connection.join().isOpen());
    }
}
