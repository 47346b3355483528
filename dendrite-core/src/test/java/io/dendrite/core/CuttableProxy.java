package io.dendrite.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP relay to a server on loopback that a test can cut and restore: a network partition that keeps
 * the server (and its data) alive, unlike a restart.
 */
final class CuttableProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;

  CuttableProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "proxy-accept-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return listener.getLocalPort();
  }

  /** Drops every connection and refuses new ones until {@link #restore}. */
  void cut() {
    cut = true;
    open.forEach(CuttableProxy::closeQuietly);
    open.clear();
  }

  void restore() {
    cut = false;
  }

  @Override
  public void close() throws IOException {
    cut();
    listener.close();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        if (cut) {
          client.close();
          continue;
        }
        Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        open.add(client);
        open.add(server);
        relay(client, server);
        relay(server, client);
      } catch (IOException closed) {
        // the listener was closed, or the target refused: the client sees its connection fail
      }
    }
  }

  private void relay(Socket from, Socket to) {
    Thread pump = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException broken) {
        // cut or closed
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }, "proxy-relay");
    pump.setDaemon(true);
    pump.start();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // already closed
    }
  }
}
