package io.dendrite.iq.client;

import io.dendrite.iq.protocol.MalformedReplyException;
import io.dendrite.iq.protocol.Reply;
import io.dendrite.iq.protocol.ReplyParser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * One socket with many requests in flight, and no I/O thread of its own.
 *
 * <p>A request is written by the thread that sends it, and its reply is read by a thread that waits for it: the
 * common synchronous request costs one write and one read system call in the caller's thread, with no hand-off to
 * an event loop and back (which cost several times the round trip itself). memcached answers in request order, so
 * replies are paired with requests first-in first-out. At most one thread reads at a time (the <em>reader</em>);
 * it parses every reply that arrives, completes their futures, and stops once its own reply is in. Other waiting
 * threads park; when the reader stops with requests still in flight it wakes the waiter of the oldest one, which
 * takes over (leader/follower). Replies that nobody waits for ({@code *Async} used with callbacks only, a request
 * whose caller gave up) are read by the client's {@link BackgroundReader}.
 *
 * <p>Futures are completed after the reader gave up its role, so a callback may itself send and wait.
 *
 * <p>The socket is non-blocking: the reader waits on a selector of the connection's own, which also lets an idle
 * connection be checked for a server that closed it ({@link #closeIfServerClosed}) without waiting.
 */
final class SocketConnection {

  private final ServerAddress address;
  private final SocketChannel channel;
  private final Wire wire;

  /** The reader waits on it for replies; used only by the reader. */
  private final Selector selector;

  private final long waitMillis;
  private final long requestTimeoutNanos;
  private final BackgroundReader background;
  private final Runnable onClosed;

  /** Guards writing and the order of {@link #inFlight}, which must be the order on the wire. */
  private final ReentrantLock writeLock = new ReentrantLock();

  /** Written, awaiting a reply; appended under {@link #writeLock}, removed only by the reader. */
  private final Queue<OutgoingRequest> inFlight = new ConcurrentLinkedQueue<>();

  /** The reader role: whoever sets it from false to true may read the socket and poll {@link #inFlight}. */
  private final AtomicBoolean reading = new AtomicBoolean();

  private final AtomicBoolean closed = new AtomicBoolean();

  /** Received bytes not yet parsed; touched only by the reader. */
  private final ByteBuf received = Unpooled.buffer(16 * 1024);

  private volatile Throwable closeCause;

  /** When the reader last received bytes: a connection quiet for longer is checked before a send reuses it. */
  private volatile long lastReadNanos = System.nanoTime();

  private SocketConnection(
      ServerAddress address,
      SocketChannel channel,
      Wire wire,
      Selector selector,
      Duration requestTimeout,
      BackgroundReader background,
      Runnable onClosed) {
    this.address = address;
    this.channel = channel;
    this.wire = wire;
    this.selector = selector;
    // A reader waiting for a reply wakes this often to see whether the oldest request ran late.
    this.waitMillis = Math.max(1, Math.min(requestTimeout.toMillis() / 4, 250));
    this.requestTimeoutNanos = requestTimeout.toNanos();
    this.background = background;
    this.onClosed = onClosed;
  }

  /**
   * Connects in the calling thread.
   *
   * @param onClosed run once when the connection is lost or closed, before its requests fail
   */
  static SocketConnection open(
      ServerAddress address,
      Duration connectTimeout,
      Duration requestTimeout,
      SSLContext tls,
      BackgroundReader background,
      Runnable onClosed)
      throws IOException {
    long deadline = System.nanoTime() + connectTimeout.toNanos();
    SocketChannel channel = SocketChannel.open();
    Selector selector = null;
    try {
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      channel
          .socket()
          .connect(
              new InetSocketAddress(address.host(), address.port()),
              (int) Math.max(1, connectTimeout.toMillis()));
      channel.configureBlocking(false);
      Wire wire =
          tls == null
              ? new Wire.Plain(channel, address.toString(), requestTimeout)
              : TlsWire.handshake(
                  channel,
                  clientEngine(tls, address),
                  address.toString(),
                  deadline,
                  requestTimeout);
      selector = Selector.open();
      channel.register(selector, SelectionKey.OP_READ);
      SocketConnection connection =
          new SocketConnection(
              address, channel, wire, selector, requestTimeout, background, onClosed);
      background.opened(connection);
      return connection;
    } catch (IOException | RuntimeException e) {
      channel.close();
      if (selector != null) {
        selector.close();
      }
      throw e;
    }
  }

  /** A client-side engine that checks the server's certificate against its name, as HTTPS does. */
  private static SSLEngine clientEngine(SSLContext tls, ServerAddress address) {
    SSLEngine engine = tls.createSSLEngine(address.host(), address.port());
    engine.setUseClientMode(true);
    SSLParameters parameters = engine.getSSLParameters();
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    engine.setSSLParameters(parameters);
    return engine;
  }

  boolean isOpen() {
    return !closed.get();
  }

  /**
   * Writes the command from the calling thread, or holds it in the thread's open {@link Flight}; its {@link
   * OutgoingRequest#reply} completes when the reply is read.
   */
  void send(OutgoingRequest command) {
    command.connection = this;
    Flight flight = Flight.ofCurrentThread();
    if (flight != null) {
      flight.hold(this, command);
    } else {
      sendAll(List.of(command));
    }
  }

  /** Writes the commands with one system call (unless the send buffer is full), in order, from the calling thread. */
  void sendAll(List<OutgoingRequest> commands) {
    writeLock.lock();
    try {
      if (closed.get()) {
        IqConnectionException lost = lost();
        commands.forEach(command -> command.reply.completeExceptionally(lost));
        return;
      }
      long now = System.nanoTime();
      int guards = 0;
      for (OutgoingRequest command : commands) {
        guards += command.fence != null ? 1 : 0;
      }
      ByteBuffer[] bytes = new ByteBuffer[commands.size() + guards];
      int at = 0;
      for (OutgoingRequest command : commands) {
        command.sentAtNanos = now;
        inFlight.add(command);
        FenceScope fence = command.fence;
        if (fence != null) {
          bytes[at++] = ByteBuffer.wrap(fence.guard); // its reply is the guarded request's
        }
        bytes[at++] = ByteBuffer.wrap(command.bytes);
      }
      OutgoingRequest first = commands.get(0);
      if (first.sender != null && first.senderThread == Thread.currentThread()) {
        first.sender.wrote();
      }
      write(bytes, now);
    } catch (IOException e) {
      close(e); // fails the commands with the others in flight
    } finally {
      writeLock.unlock();
    }
  }

  /** Writes all of it, waiting out a full send buffer up to the request timeout. */
  private void write(ByteBuffer[] bytes, long sentAtNanos) throws IOException {
    wire.write(bytes, sentAtNanos + requestTimeoutNanos);
  }

  /**
   * If no request is in flight and no thread reads, looks (without waiting) whether the server closed the
   * connection, and if so closes it here too, which moves the server's epoch. Holders of server state call this
   * through {@link ServerConnection#epoch()} before trusting it, so a restart is seen before a stale lease token
   * is sent to the server's next run.
   */
  void closeIfServerClosed() {
    if (closed.get() || !inFlight.isEmpty() || !reading.compareAndSet(false, true)) {
      return;
    }
    List<Completion> done = new ArrayList<>(0);
    try {
      if (inFlight.isEmpty()) {
        int n = wire.read(received);
        if (n < 0) {
          close(new IOException("the server closed the connection"));
        } else if (n > 0) {
          parseReceived(done); // a request sent since the check above may own these bytes
        }
      }
    } catch (IOException | MalformedReplyException e) {
      close(e);
      failInFlight(done);
    } finally {
      reading.set(false);
    }
    handOver(true);
    complete(done);
  }

  /** Reads replies in the calling thread, or waits for the thread reading them, until the command's reply is in. */
  void await(OutgoingRequest command) {
    Thread me = Thread.currentThread();
    while (!command.reply.isDone() && !me.isInterrupted()) {
      // Once another reader took the reply off the connection there is nothing left to read for it:
      // taking the role would find nothing in flight and return at once, round after round (a spin
      // that lasted as long as that reader was descheduled before completing it). Park until it
      // completes the reply instead.
      if (!command.replyTaken && reading.compareAndSet(false, true)) {
        readAsReader(command);
      } else {
        command.waiter = me;
        // Re-checked after publishing the waiter: a reader that stopped before it could see us has
        // cleared the role by now, and we take it ourselves on the next turn; one that took our
        // reply completes it after reading the waiter, and wakes us.
        if ((command.replyTaken || reading.get()) && !command.reply.isDone()) {
          LockSupport.parkNanos(this, requestTimeoutNanos);
        }
      }
    }
  }

  /**
   * Reads replies while some request is in flight and no other thread reads. For the background reader: returns
   * at once if another thread has the role (it hands over when it stops).
   */
  void readUnattended() {
    while (!inFlight.isEmpty() && reading.compareAndSet(false, true)) {
      if (readAsReader(null)) {
        return; // a waiting thread took over
      }
    }
  }

  /** True if nothing is in flight and nothing was received for {@code nanos}. */
  boolean idleLongerThan(long nanos) {
    return inFlight.isEmpty() && System.nanoTime() - lastReadNanos > nanos;
  }

  /** True if a request has been in flight longer than {@code nanos} while no thread was reading. */
  boolean hasUnattendedRequestOlderThan(long nanos, long nowNanos) {
    OutgoingRequest oldest = inFlight.peek();
    return oldest != null && !reading.get() && nowNanos - oldest.sentAtNanos > nanos;
  }

  /**
   * Holds the reader role on entry; reads one batch of replies, gives the role up, then completes them. Returns
   * whether a waiting thread was woken to read next; if not and requests are still in flight, a background reader
   * was asked to, unless this is one ({@code mine == null}) and goes on itself.
   */
  private boolean readAsReader(OutgoingRequest mine) {
    List<Completion> done = new ArrayList<>(2);
    try {
      if (mine == null || !mine.reply.isDone()) {
        readBatch(done);
      }
    } finally {
      reading.set(false);
    }
    boolean wokeWaiter = handOver(mine != null);
    complete(done);
    return wokeWaiter;
  }

  /**
   * Completes the futures; outside the thread's flight, if it has one open: their callbacks belong to other
   * threads' requests, and a flight must never hold what another thread waits for.
   */
  private static void complete(List<Completion> done) {
    if (done.isEmpty()) {
      return;
    }
    Flight flight = Flight.suspend();
    try {
      for (Completion completion : done) {
        completion.run();
      }
    } finally {
      Flight.resume(flight);
    }
  }

  /**
   * Called right after giving the reader role up. A request still in flight needs a reader: the waiter of the
   * oldest such request (it will take the role), or else the background reader.
   */
  private boolean handOver(boolean orBackground) {
    if (inFlight.isEmpty()) {
      return false;
    }
    for (OutgoingRequest command : inFlight) {
      Thread waiter = command.waiter;
      if (waiter != null && !command.reply.isDone()) {
        LockSupport.unpark(waiter);
        return true;
      }
    }
    if (orBackground) {
      background.read(this);
    }
    return false;
  }

  /** Holds the reader role: parses buffered replies, reading the socket once if none is complete yet. */
  private void readBatch(List<Completion> done) {
    try {
      if (closed.get()) {
        failInFlight(done);
        return;
      }
      parseReceived(done);
      while (done.isEmpty() && !inFlight.isEmpty()) {
        // Wait first: a reply is rarely in before its reader gets here, so reading first would
        // mostly cost a system call that finds nothing.
        if (selector.select(waitMillis) == 0) {
          closeIfLate();
          if (closed.get()) {
            failInFlight(done);
            return;
          }
          if (Thread.currentThread().isInterrupted()) {
            return; // select() returns at once for an interrupted thread: let another one read
          }
          continue;
        }
        selector.selectedKeys().clear();
        int n = wire.read(received);
        if (n < 0) {
          throw new IOException("the server closed the connection");
        }
        lastReadNanos = System.nanoTime();
        parseReceived(done);
      }
      received.discardSomeReadBytes();
    } catch (IOException | MalformedReplyException | ClosedSelectorException e) {
      // A reply we cannot read or parse means replies can no longer be paired with requests.
      close(e);
      failInFlight(done);
    }
  }

  private void parseReceived(List<Completion> done) {
    while (received.isReadable()) {
      OutgoingRequest head = inFlight.peek();
      if (head == null) {
        throw new MalformedReplyException(
            "reply bytes with no request outstanding: replies and requests are out of step and"
                + " cannot be paired any more");
      }
      Reply reply = ReplyParser.parse(received, head.format);
      if (reply == null) {
        return;
      }
      try {
        head.checkPairedWith(reply);
      } catch (MalformedReplyException outOfStep) {
        if (reply instanceof Reply.Status) {
          // An error to a request that carried data is that request's own reply; the replies
          // after it are what cannot be paired. A value naming another key is nobody's.
          take(head, reply, done);
        }
        throw outOfStep;
      }
      take(head, reply, done);
    }
  }

  private void take(OutgoingRequest head, Reply reply, List<Completion> done) {
    inFlight.poll();
    head.replyTaken = true;
    FenceScope fence = head.fence;
    if (fence != null
        && reply instanceof Reply.Status status
        && status.line().startsWith("FENCED_OUT ")) {
      long at;
      try {
        at = Long.parseUnsignedLong(status.line().substring("FENCED_OUT ".length()).trim());
      } catch (NumberFormatException e) {
        at = -1;
      }
      done.add(
          new Completion(
              head, null, new FencedOutException(address.toString(), fence.name, fence.epoch, at)));
      return;
    }
    done.add(new Completion(head, reply, null));
  }

  private void closeIfLate() {
    OutgoingRequest oldest = inFlight.peek();
    if (oldest != null && System.nanoTime() - oldest.sentAtNanos > requestTimeoutNanos) {
      // Later replies cannot overtake the missing one: the connection is useless now.
      close(
          new TimeoutException(
              "no reply from " + address + " within " + Duration.ofNanos(requestTimeoutNanos)));
    }
  }

  /** Holds the reader role (or the connection is closed, so nobody adds): every request in flight fails. */
  private void failInFlight(List<Completion> done) {
    IqConnectionException cause = lost();
    for (OutgoingRequest command = inFlight.poll(); command != null; command = inFlight.poll()) {
      command.replyTaken = true;
      done.add(new Completion(command, null, cause));
    }
  }

  /** Closes the socket; requests in flight fail (now if no thread reads, else by the reader, which sees it). */
  void close() {
    close(null);
  }

  private void close(Throwable cause) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    closeCause = cause;
    try {
      channel.close();
      selector.close(); // wakes a reader waiting on it; its next wait fails and it fails what is in
      // flight
    } catch (IOException ignored) {
      // closing anyway
    }
    background.closed(this);
    onClosed.run();
    // The send that raced with closing has either added its command already, or will see closed and
    // fail it.
    writeLock.lock();
    writeLock.unlock();
    if (!inFlight.isEmpty()) {
      if (reading.compareAndSet(false, true)) {
        readAsReader(null);
      } else {
        handOver(true);
      }
    }
  }

  private IqConnectionException lost() {
    return new IqConnectionException("connection to " + address + " lost", closeCause);
  }

  /** A reply (or failure) to deliver once the reader role is given up. */
  private record Completion(OutgoingRequest command, Reply reply, Throwable failure) {
    void run() {
      if (failure != null) {
        command.reply.completeExceptionally(failure);
      } else {
        command.reply.complete(reply);
      }
      Thread waiter = command.waiter;
      if (waiter != null) {
        LockSupport.unpark(waiter);
      }
    }
  }
}
