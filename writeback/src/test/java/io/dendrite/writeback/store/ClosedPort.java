package io.dendrite.writeback.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** A loopback port nothing listens on: the quickest way to meet a database that is down. */
final class ClosedPort {
  private ClosedPort() {}

  static int find() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
