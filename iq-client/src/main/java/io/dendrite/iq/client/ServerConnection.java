package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;

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

  /** A connection idle for longer is checked for a server that closed it before a request is sent on it. */
  private static final long IDLE_CHECK_NANOS = 1_000_000;

  /** Numbers threads as they first send, so that each keeps to one connection and threads spread evenly. */
  private static final AtomicInteger threadsSeen = new AtomicInteger();

  private static final ThreadLocal<Integer> threadNumber =
      ThreadLocal.withInitial(threadsSeen::getAndIncrement);

  private final ServerAddress address;
  private final Duration connectTimeout;
  private final Duration requestTimeout;
  private final Login login;
  private final SSLContext tls;
  private final BackgroundReader background;
  private final AtomicReferenceArray<CompletableFuture<SocketConnection>> slots;
  private final AtomicLong epoch = new AtomicLong();
  private final ThreadLocal<ThreadTrips> tripsOfThread;

  /** {@code tripsOfThread}: the sending thread's requests and round trips, shared by the client's connections. */
  ServerConnection(
      ServerAddress address,
      int connections,
      Duration connectTimeout,
      Duration requestTimeout,
      Login login,
      SSLContext tls,
      BackgroundReader background,
      ThreadLocal<ThreadTrips> tripsOfThread) {
    this.address = address;
    this.connectTimeout = connectTimeout;
    this.requestTimeout = requestTimeout;
    this.login = login;
    this.tls = tls;
    this.background = background;
    this.slots = new AtomicReferenceArray<>(connections);
    this.tripsOfThread = tripsOfThread;
  }

  ServerAddress address() {
    return address;
  }

  /**
   * The current epoch; see the class comment. Idle connections are first checked (without waiting) for a server
   * that closed them, so that a restart while nothing was in flight moves the epoch before a holder of state from
   * the previous run trusts it.
   */
  long epoch() {
    for (int i = 0; i < slots.length(); i++) {
      SocketConnection open = openIn(i);
      if (open != null) {
        open.closeIfServerClosed();
      }
    }
    return epoch.get();
  }

  /**
   * Sends a command on the calling thread's connection, from the calling thread: with as many connections as
   * sending threads, every thread reads its own replies and never waits for another's to be read first or wakes
   * another to read (a park and an unpark, two system calls and a context switch, per hand-over). The future
   * fails with {@link IqConnectionException} if the connection is lost, including when the server stops answering
   * for the request timeout. Waiting on it ({@link #await}, {@code get}, {@code join}, also on stages derived from
   * it) reads the reply in the waiting thread.
   */
  CompletableFuture<Reply> send(OutgoingRequest command) {
    return send(command, Math.floorMod(threadNumber.get(), slots.length()));
  }

  /**
   * {@link #send}, always on the first connection: the commands of a transaction sent this way reach the server in
   * the order they were sent (a swap before the commit that applies it) even when the sender does not wait for one
   * reply before it sends the next. Other requests go on their thread's connection.
   */
  CompletableFuture<Reply> sendInOrder(OutgoingRequest command) {
    return send(command, 0);
  }

  private CompletableFuture<Reply> send(OutgoingRequest command, int slot) {
    ThreadTrips trips = tripsOfThread.get();
    trips.sent();
    command.sender = trips;
    command.senderThread = Thread.currentThread();
    command.fence = FenceScope.current();
    SocketConnection connection;
    try {
      connection = connection(slot);
    } catch (IqConnectionException e) {
      command.reply.completeExceptionally(e);
      return command.reply;
    }
    connection.send(command);
    return command.reply;
  }

  /**
   * Sends a request made by {@code request} on each of the connections open now, and waits for every reply (none
   * when no connection is open). A server that keeps state per connection hears it on each of them.
   */
  List<Reply> callOnEveryOpen(Supplier<OutgoingRequest> request) {
    List<CompletableFuture<Reply>> sent = new ArrayList<>();
    for (int i = 0; i < slots.length(); i++) {
      if (openIn(i) != null) {
        sent.add(send(request.get(), i));
      }
    }
    List<Reply> replies = new ArrayList<>();
    for (CompletableFuture<Reply> reply : sent) {
      replies.add(await(reply));
    }
    return replies;
  }

  /** Sends a command and waits for its reply. */
  Reply call(OutgoingRequest command) {
    return await(send(command));
  }

  /** {@link #sendInOrder} a command and waits for its reply. */
  Reply callInOrder(OutgoingRequest command) {
    return await(sendInOrder(command));
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

  /**
   * The outcome of a future that is complete already (read in a callback of all its requests' futures), its
   * failure unwrapped as {@link #await} does. Unlike {@code join}, it does not count as the thread waiting
   * ({@link ThreadTrips}): a callback that runs in the sending thread, because the replies were in before it was
   * attached, is not a step of that thread's chain of requests.
   */
  static <T> T completed(CompletableFuture<T> future) {
    if (!future.isDone()) {
      throw new IllegalStateException("not complete: " + future);
    }
    try {
      return future.getNow(null);
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IqException iq) {
        throw iq;
      }
      throw new IqException("request failed", cause);
    }
  }

  void close() {
    for (int i = 0; i < slots.length(); i++) {
      CompletableFuture<SocketConnection> connection = slots.get(i);
      if (connection != null) {
        connection.thenAccept(SocketConnection::close);
      }
    }
  }

  /**
   * The slot's open connection, connecting in the calling thread if it has none. Threads that need the slot while
   * it connects wait for that one attempt instead of making their own.
   */
  private SocketConnection connection(int slot) {
    while (true) {
      CompletableFuture<SocketConnection> current = slots.get(slot);
      SocketConnection open = openIn(slot);
      if (open != null) {
        // A connection the server closed while it was idle (a restart) is replaced rather than
        // failing the request; one in use is not checked, since that would cost a system call per
        // request.
        if (open.idleLongerThan(IDLE_CHECK_NANOS)) {
          open.closeIfServerClosed();
        }
        if (open.isOpen()) {
          return open;
        }
      } else if (current != null && !current.isDone()) {
        return await(current); // another thread is connecting it
      }
      CompletableFuture<SocketConnection> fresh = new CompletableFuture<>();
      if (!slots.compareAndSet(slot, current, fresh)) {
        continue;
      }
      try {
        SocketConnection opened =
            SocketConnection.open(
                address, connectTimeout, requestTimeout, tls, background, epoch::incrementAndGet);
        if (login.required()) {
          logIn(opened);
        }
        fresh.complete(opened);
        return opened;
      } catch (LoginRefusedException refused) {
        fresh.completeExceptionally(refused);
        throw refused;
      } catch (IOException | RuntimeException e) {
        IqConnectionException failure =
            new IqConnectionException("cannot connect to " + address, e);
        fresh.completeExceptionally(failure);
        throw failure;
      }
    }
  }

  /** Sends the login before anything else on a fresh connection and waits for it to be accepted. */
  private void logIn(SocketConnection opened) {
    OutgoingRequest request = OutgoingRequest.login(login.data());
    opened.send(request);
    Reply reply;
    try {
      reply = await(request.reply);
    } catch (RuntimeException failed) {
      opened.close();
      throw failed;
    }
    if (!(reply instanceof Reply.Status status && status.line().equals("STORED"))) {
      opened.close();
      throw new LoginRefusedException(
          "login to " + address + " as " + login.user() + " was refused: " + describe(reply));
    }
  }

  /** The server refused the login: not a lost connection, and trying again will not help. */
  private static final class LoginRefusedException extends IqException {
    private static final long serialVersionUID = 1L;

    LoginRefusedException(String message) {
      super(message);
    }
  }

  private static String describe(Reply reply) {
    return reply instanceof Reply.Status status ? status.line() : reply.toString();
  }

  /** The slot's connection if it is connected and not known to be closed, else null. */
  private SocketConnection openIn(int slot) {
    CompletableFuture<SocketConnection> connection = slots.get(slot);
    if (connection == null || !connection.isDone() || connection.isCompletedExceptionally()) {
      return null;
    }
    SocketConnection open = connection.join();
    return open.isOpen() ? open : null;
  }
}
