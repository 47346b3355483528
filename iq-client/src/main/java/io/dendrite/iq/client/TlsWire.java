package io.dendrite.iq.client;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * TLS over a connection's non-blocking socket, with the JDK's {@link SSLEngine}: writes are encrypted into one
 * buffer and written out, reads decrypt every complete record that has arrived. The handshake is done before the
 * connection carries requests; a server whose certificate the client's {@code SSLContext} does not trust (or whose
 * name does not match) is refused there, and no request is sent.
 *
 * <p>Writers wrap one at a time (the connection's write lock) and the reader unwraps, which an {@code SSLEngine}
 * allows at once; a wrap the reader needs (a TLS 1.3 key update) takes {@link #wrapping} too.
 */
final class TlsWire implements Wire {
  private static final ByteBuffer[] NOTHING = {ByteBuffer.allocate(0)};

  private final SocketChannel channel;
  private final SSLEngine engine;
  private final String peer;
  private final Duration writeTimeout;
  private final Object wrapping = new Object();

  /** Received and not yet decrypted; in write mode (filled from the socket) between calls. */
  private ByteBuffer netIn;

  private ByteBuffer appIn;
  private ByteBuffer netOut;
  private boolean closedByServer;

  private TlsWire(SocketChannel channel, SSLEngine engine, String peer, Duration writeTimeout) {
    this.channel = channel;
    this.engine = engine;
    this.peer = peer;
    this.writeTimeout = writeTimeout;
    int packet = engine.getSession().getPacketBufferSize();
    this.netIn = ByteBuffer.allocate(packet);
    this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
    this.netOut = ByteBuffer.allocate(packet);
  }

  /**
   * Runs the handshake on a connected non-blocking socket.
   *
   * @throws SSLException when the server's certificate is not trusted, or the handshake fails otherwise
   * @throws IOException when the socket fails or the deadline passes
   */
  static TlsWire handshake(
      SocketChannel channel,
      SSLEngine engine,
      String peer,
      long deadlineNanos,
      Duration writeTimeout)
      throws IOException {
    TlsWire wire = new TlsWire(channel, engine, peer, writeTimeout);
    // A selector of its own for the handshake; the connection registers the socket with its own
    // afterwards.
    try (Selector selector = Selector.open()) {
      channel.register(selector, SelectionKey.OP_READ);
      engine.beginHandshake();
      while (true) {
        switch (engine.getHandshakeStatus()) {
          case NEED_WRAP -> wire.wrapAndWrite(NOTHING, deadlineNanos);
          case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
            if (!wire.unwrapOne() && !wire.closedByServer) {
              long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
              if (left <= 0) {
                throw new IOException("TLS handshake with " + peer + " did not finish in time");
              }
              selector.select(left);
              selector.selectedKeys().clear();
              if (channel.read(wire.netIn) < 0) {
                throw new IOException("the server closed the connection during the TLS handshake");
              }
            }
            if (wire.closedByServer) {
              throw new SSLException("the server ended the TLS handshake with " + peer);
            }
          }
          case NEED_TASK -> wire.runTasks();
          default -> {
            return wire;
          }
        }
      }
    }
  }

  @Override
  public void write(ByteBuffer[] bytes, long deadlineNanos) throws IOException {
    wrapAndWrite(bytes, deadlineNanos);
  }

  private void wrapAndWrite(ByteBuffer[] bytes, long deadlineNanos) throws IOException {
    synchronized (wrapping) {
      do {
        netOut.clear();
        SSLEngineResult result = engine.wrap(bytes, netOut);
        switch (result.getStatus()) {
          case BUFFER_OVERFLOW -> {
            netOut = ByteBuffer.allocate(netOut.capacity() * 2);
            continue;
          }
          case CLOSED -> throw new IOException("the TLS session with " + peer + " is closed");
          default -> {}
        }
        netOut.flip();
        while (netOut.hasRemaining()) {
          channel.write(netOut);
          if (netOut.hasRemaining()) {
            Wire.waitToWrite(peer, deadlineNanos, writeTimeout);
          }
        }
        if (result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
          runTasks();
        }
      } while (hasRemaining(bytes));
    }
  }

  private static boolean hasRemaining(ByteBuffer[] bytes) {
    for (ByteBuffer buffer : bytes) {
      if (buffer.hasRemaining()) {
        return true;
      }
    }
    return false;
  }

  @Override
  public int read(ByteBuf into) throws IOException {
    int n = channel.read(netIn);
    int before = into.writerIndex();
    while (unwrapOne()) {
      moveDecrypted(into);
      if (engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
        // The reader's own wrap (a TLS 1.3 key update) gets the time a request's write gets.
        wrapAndWrite(NOTHING, System.nanoTime() + writeTimeout.toNanos());
      }
    }
    moveDecrypted(into);
    int added = into.writerIndex() - before;
    return added == 0 && (n < 0 || closedByServer) ? -1 : added;
  }

  /** Decrypts one record from {@link #netIn} if a whole one is there; whether it did. */
  private boolean unwrapOne() throws IOException {
    netIn.flip();
    try {
      if (!netIn.hasRemaining()) {
        return false;
      }
      SSLEngineResult result = engine.unwrap(netIn, appIn);
      switch (result.getStatus()) {
        case BUFFER_UNDERFLOW -> {
          if (netIn.limit() == netIn.capacity()) {
            ByteBuffer larger = ByteBuffer.allocate(netIn.capacity() * 2);
            larger.put(netIn);
            larger.flip();
            netIn = larger;
          }
          return false;
        }
        case BUFFER_OVERFLOW -> {
          ByteBuffer larger = ByteBuffer.allocate(appIn.capacity() * 2);
          appIn.flip();
          larger.put(appIn);
          appIn = larger;
          return true;
        }
        case CLOSED -> {
          closedByServer = true;
          return false;
        }
        default -> {
          if (result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
            runTasks();
          }
          return true;
        }
      }
    } finally {
      netIn.compact();
    }
  }

  private void moveDecrypted(ByteBuf into) {
    appIn.flip();
    into.writeBytes(appIn);
    appIn.clear();
  }

  private void runTasks() {
    for (Runnable task = engine.getDelegatedTask();
        task != null;
        task = engine.getDelegatedTask()) {
      task.run();
    }
  }
}
