package io.dendrite.testsupport.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** A loopback port nothing listens on: the quickest way to meet a database that is down. */
public final class ClosedPort {
  private ClosedPort() {}

  /** A port that was free a moment ago; connecting to it is refused at once. */
  public static int find() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
