package io.dendrite.iq.client;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Reads the replies nobody waits for. A request's reply is normally read by the thread that waits for it
 * ({@link SocketConnection}); this reader steps in when a reader stops with requests still in flight and no waiter
 * to hand over to (async requests used with callbacks only), and, through a check every {@link #TICK}, when a
 * request has gone unread that long (its caller gave up on it, or waits on a future that cannot read for itself).
 * Without it such a future would never complete and its connection would never notice a dead server.
 */
final class BackgroundReader implements AutoCloseable {

  /** How often unread requests are looked for; the longest a reply nobody waits for can sit unread. */
  static final Duration TICK = Duration.ofMillis(2);

  private final Set<SocketConnection> open = ConcurrentHashMap.newKeySet();
  private final Set<SocketConnection> scheduled = ConcurrentHashMap.newKeySet();
  private final ExecutorService readers;
  private final Thread ticker;
  private volatile boolean closed;

  BackgroundReader() {
    AtomicInteger count = new AtomicInteger();
    ThreadFactory daemons =
        runnable -> {
          Thread thread = new Thread(runnable, "iq-client-reader-" + count.incrementAndGet());
          thread.setDaemon(true);
          return thread;
        };
    this.readers = Executors.newCachedThreadPool(daemons);
    this.ticker = new Thread(this::tick, "iq-client-ticker");
    ticker.setDaemon(true);
    ticker.start();
  }

  void opened(SocketConnection connection) {
    open.add(connection);
  }

  void closed(SocketConnection connection) {
    open.remove(connection);
  }

  /** Reads the connection's replies on a background thread until none is in flight or another thread reads. */
  void read(SocketConnection connection) {
    if (closed || !scheduled.add(connection)) {
      return;
    }
    try {
      readers.execute(
          () -> {
            scheduled.remove(connection);
            connection.readUnattended();
          });
    } catch (RejectedExecutionException e) {
      scheduled.remove(connection);
    }
  }

  private void tick() {
    long tickNanos = TICK.toNanos();
    while (!closed) {
      LockSupport.parkNanos(this, tickNanos);
      long now = System.nanoTime();
      for (SocketConnection connection : open) {
        if (connection.hasUnattendedRequestOlderThan(tickNanos, now)) {
          read(connection);
        }
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    LockSupport.unpark(ticker);
    readers.shutdown();
    try {
      readers.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
