package io.dendrite.testsupport.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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
 * </ul>
 */
public final class CuttableProxy implements AutoCloseable {
  private enum Mode { RELAY, REFUSE, BLACK_HOLE }

  private final String targetHost;
  private final int targetPort;
  private final int port;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private volatile Mode mode = Mode.RELAY;
  private volatile ServerSocket listener;
  private volatile boolean closed;

  /** Listens on an ephemeral loopback port and relays to {@code targetHost:targetPort}. */
  public CuttableProxy(String targetHost, int targetPort) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.port = listener.getLocalPort();
    startAccepting(listener);
  }

  /** Relays to a server on the loopback address. */
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

  @Override
  public synchronized void close() {
    closed = true;
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
        pump(link, client, null);
        continue;
      }
      try {
        link.server = new Socket(targetHost, targetPort);
      } catch (IOException refused) {
        link.close();
        continue;
      }
      pump(link, client, link.server);
      pump(link, link.server, client);
    }
  }

  /** Copies {@code from} to {@code to} while relaying; drops what it reads while black-holed. */
  private void pump(Link link, Socket from, Socket to) {
    Thread pump = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = from.getInputStream()) {
        OutputStream out = to == null ? null : to.getOutputStream();
        for (int n; (n = in.read(buffer)) >= 0; ) {
          if (mode != Mode.RELAY || out == null) {
            link.lostBytes = true;
            continue;
          }
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException broken) {
        // cut, closed by either side, or closed by restore()
      } finally {
        link.close();
      }
    }, "proxy-relay-" + port);
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
