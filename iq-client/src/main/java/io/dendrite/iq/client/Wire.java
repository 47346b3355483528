package io.dendrite.iq.client;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * How a {@link SocketConnection}'s bytes cross its non-blocking socket: as they are, or through TLS ({@link
 * TlsWire}). Writes come from the connection's writers, one at a time (under its write lock); reads from its reader,
 * one at a time; the two may overlap.
 */
interface Wire {

  /**
   * Writes all of {@code bytes}, waiting out a full send buffer in short sleeps until {@code deadlineNanos}.
   *
   * @throws IOException when the socket fails, or the deadline passes first
   */
  void write(ByteBuffer[] bytes, long deadlineNanos) throws IOException;

  /**
   * Moves what has arrived (decrypted, for TLS) into {@code into}, without waiting.
   *
   * @return the bytes added, possibly 0; -1 once the server closed the connection
   */
  int read(ByteBuf into) throws IOException;

  /** The socket as it is: what the connection writes is what the server reads. */
  final class Plain implements Wire {
    private final SocketChannel channel;
    private final String peer;
    private final Duration writeTimeout;

    /** {@code writeTimeout} is what the deadlines given to {@link #write} allow, for the error that says so. */
    Plain(SocketChannel channel, String peer, Duration writeTimeout) {
      this.channel = channel;
      this.peer = peer;
      this.writeTimeout = writeTimeout;
    }

    @Override
    public void write(ByteBuffer[] bytes, long deadlineNanos) throws IOException {
      ByteBuffer last = bytes[bytes.length - 1];
      while (true) {
        channel.write(bytes);
        if (!last.hasRemaining()) {
          return;
        }
        waitToWrite(peer, deadlineNanos, writeTimeout);
      }
    }

    @Override
    public int read(ByteBuf into) throws IOException {
      into.ensureWritable(8 * 1024);
      return into.writeBytes(channel, into.writableBytes());
    }
  }

  /**
   * A socket whose send buffer is full (a server that stopped reading) is rare: waited out in short sleeps until
   * {@code deadlineNanos}, which is {@code timeout} after the write began.
   */
  static void waitToWrite(String peer, long deadlineNanos, Duration timeout) throws IOException {
    if (System.nanoTime() - deadlineNanos > 0) {
      throw new IOException(
          "could not write to "
              + peer
              + " within "
              + timeout.toMillis()
              + " ms: its send buffer stayed full (the server is not reading)",
          new TimeoutException("send buffer full"));
    }
    LockSupport.parkNanos(Wire.class, 50_000);
  }
}
