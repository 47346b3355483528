package io.dendrite.testsupport;

/**
 * A stock memcached server and a key prefix that belongs to one test.
 *
 * @param host the server's host
 * @param port the server's port
 * @param keyPrefix prefix for every key the test writes, so tests never see each other's keys
 */
public record MemcachedAddress(String host, int port, String keyPrefix) {

  /** {@code host:port}, the form most memcached clients take. */
  public String hostAndPort() {
    return host + ":" + port;
  }
}
