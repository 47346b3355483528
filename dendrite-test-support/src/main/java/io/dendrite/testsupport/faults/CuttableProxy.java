package io.dendrite.testsupport.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A TCP relay on loopback to a server on loopback that a test can fault and restore while the server (and its
 * data) stays alive, unlike a restart:
 *
 * <ul>
 *   <li>{@link #cut()}: open connections are dropped and new ones are refused (the listening port is closed, so a
 *       client sees "connection refused");
 *   <li>{@link #blackHole()}: connections are accepted and bytes are read, but nothing is forwarded either way, as
 *       when packets are dropped: a client waits until its own timeout;
 *   <li>{@link #restore()}: relays again. Connections that lost bytes to the black hole are closed then, because
 *       their streams can no longer be parsed.
 *   <li>{@link #holdFrom(Predicate)}: delays one client's requests, from the first line a test picks, until the test
 *       lets them go, as a packet stuck in a queue or a sender paused between two steps: they arrive late, but they
 *       arrive.
 * </ul>
 */
public final class CuttableProxy implements AutoCloseable {
  private static final Pattern URL_SERVER = Pattern.compile("://([^/:?]+):(\\d+)");

  private enum Mode {
    RELAY,
    REFUSE,
    BLACK_HOLE
  }

  private final String targetHost;
  private final int targetPort;
  private final int port;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private volatile Mode mode = Mode.RELAY;
  private volatile ServerSocket listener;
  private volatile boolean closed;
  private volatile Hold hold;

  /** Listens on an ephemeral loopback port and relays to {@code targetHost:targetPort}. */
  public CuttableProxy(String targetHost, int targetPort) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.port = listener.getLocalPort();
    startAccepting(listener);
  }

  /** Relays to a server on the loopback address. */
  /** A proxy in front of the server a URL names by host and port ({@code jdbc:mysql://h:p/db}, {@code mongodb://h:p}). */
  public static CuttableProxy inFrontOf(String url) throws IOException {
    Matcher server = URL_SERVER.matcher(url);
    if (!server.find()) {
      throw new IllegalArgumentException("no host:port in " + url);
    }
    return new CuttableProxy(server.group(1), Integer.parseInt(server.group(2)));
  }

  /** {@code url} with the server it names replaced by this proxy. */
  public String routed(String url) {
    return URL_SERVER.matcher(url).replaceFirst("://127.0.0.1:" + port);
  }

  public CuttableProxy(int targetPort) throws IOException {
    this(InetAddress.getLoopbackAddress().getHostAddress(), targetPort);
  }

  /** The port clients connect to; it stays the same across {@link #cut()} and {@link #restore()}. */
  public int port() {
    return port;
  }

  /** Drops every connection and refuses new ones until {@link #restore}. */
  public synchronized void cut() {
    mode = Mode.REFUSE;
    closeQuietly(listener);
    links.forEach(Link::close);
  }

  /** Swallows every byte, on open connections and on new ones, until {@link #restore}. */
  public synchronized void blackHole() {
    if (mode == Mode.REFUSE) {
      reopen();
    }
    mode = Mode.BLACK_HOLE;
  }

  /** Relays again; connections that lost bytes are closed. */
  public synchronized void restore() {
    if (mode == Mode.REFUSE) {
      reopen();
    }
    mode = Mode.RELAY;
    links.stream().filter(link -> link.lostBytes).forEach(Link::close);
  }

  /**
   * Holds the bytes a client sends, from the first request line {@code trigger} accepts (on any connection) until
   * {@link Hold#release()}; that connection's later requests queue behind them, other connections relay on. Lines
   * are read as ISO-8859-1 text, so a trigger should look at command lines, whose words are ASCII.
   */
  public Hold holdFrom(Predicate<String> trigger) {
    Hold armed = new Hold(trigger);
    hold = armed;
    return armed;
  }

  @Override
  public synchronized void close() {
    closed = true;
    Hold armed = hold;
    if (armed != null) {
      armed.release();
    }
    closeQuietly(listener);
    links.forEach(Link::close);
  }

  /** Listens on the same port again; another process could have taken it meanwhile, which fails loudly. */
  private void reopen() {
    try {
      ServerSocket reopened = new ServerSocket();
      reopened.setReuseAddress(true);
      reopened.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
      listener = reopened;
      startAccepting(reopened);
    } catch (IOException e) {
      throw new UncheckedIOException("could not listen on port " + port + " again", e);
    }
  }

  private void startAccepting(ServerSocket socket) {
    Thread acceptor = new Thread(() -> accept(socket), "proxy-accept-" + port);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private void accept(ServerSocket socket) {
    while (!socket.isClosed() && !closed) {
      Socket client;
      try {
        client = socket.accept();
      } catch (IOException listenerClosed) {
        return;
      }
      Link link = new Link(client);
      links.add(link);
      if (mode == Mode.BLACK_HOLE) {
        link.lostBytes = true;
        pump(link, client, null, true);
        continue;
      }
      try {
        link.server = new Socket(targetHost, targetPort);
      } catch (IOException refused) {
        link.close();
        continue;
      }
      pump(link, client, link.server, true);
      pump(link, link.server, client, false);
    }
  }

  /** Copies {@code from} to {@code to} while relaying; drops what it reads while black-holed. */
  private void pump(Link link, Socket from, Socket to, boolean fromClient) {
    Thread pump =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try (InputStream in = from.getInputStream()) {
                OutputStream out = to == null ? null : to.getOutputStream();
                for (int n; (n = in.read(buffer)) >= 0; ) {
                  if (mode != Mode.RELAY || out == null) {
                    link.lostBytes = true;
                    continue;
                  }
                  Hold armed = hold;
                  if (fromClient && armed != null) {
                    armed.holdIfTriggered(buffer, n);
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException broken) {
                // cut, closed by either side, or closed by restore()
              } finally {
                link.close();
              }
            },
            "proxy-relay-" + port);
    pump.setDaemon(true);
    pump.start();
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      if (closeable != null) {
        closeable.close();
      }
    } catch (Exception ignored) {
      // already closed
    }
  }

  /** Requests held from a trigger line on; see {@link #holdFrom}. */
  public static final class Hold {
    private final Predicate<String> trigger;
    private final CountDownLatch held = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    private Hold(Predicate<String> trigger) {
      this.trigger = trigger;
    }

    /** Waits until a request was held; false if none was within {@code timeout}. */
    public boolean awaitHeld(Duration timeout) throws InterruptedException {
      return held.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lets the held requests go on to the server, in order; later ones relay at once. */
    public void release() {
      released.countDown();
    }

    /** Blocks the relaying thread while this chunk of requests is held (the first time the trigger fires). */
    private void holdIfTriggered(byte[] chunk, int length) throws IOException {
      if (released.getCount() == 0) {
        return;
      }
      synchronized (this) {
        if (held.getCount() == 0) {
          return; // one connection is held; the others relay on
        }
        boolean fires = false;
        for (String line :
            new String(chunk, 0, length, StandardCharsets.ISO_8859_1).split("\r\n")) {
          fires |= trigger.test(line);
        }
        if (!fires) {
          return;
        }
        held.countDown();
      }
      try {
        released.await();
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while holding requests", interrupted);
      }
    }
  }

  /** One client connection and, unless it was accepted while black-holed, its connection to the target. */
  private final class Link {
    private final Socket client;
    private volatile Socket server;
    private volatile boolean lostBytes;

    private Link(Socket client) {
      this.client = client;
    }

    private void close() {
      closeQuietly(client);
      closeQuietly(server);
      links.remove(this);
    }
  }
}
