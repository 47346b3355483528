package io.dendrite.iq.client;

import java.util.Objects;

/**
 * Where one cache server listens. Its {@link #toString()} form {@code host:port} is also its name on
 * the hash ring, so every client that lists the same servers maps keys the same way.
 *
 * @param host host name or IP literal
 * @param port TCP port
 */
public record ServerAddress(String host, int port) {

  public ServerAddress {
    Objects.requireNonNull(host, "host");
    if (host.isBlank() || port <= 0 || port > 65_535) {
      throw new IllegalArgumentException("bad server address " + host + ":" + port);
    }
  }

  /**
   * Parses {@code host:port}.
   *
   * @param text the address, e.g. {@code "127.0.0.1:11211"}
   * @return the address
   * @throws IllegalArgumentException if the text is not {@code host:port}
   */
  public static ServerAddress parse(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("expected host:port, got '" + text + "'");
    }
    try {
      return new ServerAddress(
          text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("expected host:port, got '" + text + "'", e);
    }
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
