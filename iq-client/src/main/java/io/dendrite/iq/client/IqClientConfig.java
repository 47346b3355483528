package io.dendrite.iq.client;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * Everything an {@link IqClient} can be configured with. Build it with {@link IqClient#builder()}.
 *
 * @param servers              the cache servers; keys are spread over them by consistent hashing
 * @param connectionsPerServer pipelined connections kept to each server (requests are spread over them)
 * @param connectTimeout       limit on establishing a connection
 * @param requestTimeout       limit on waiting for any one reply
 * @param backoff              retry policy for hot misses
 * @param pointsPerServer      points each server gets on the hash ring (ketama uses 160)
 * @param login                what every connection logs in with first, when the servers require it
 * @param tls                  the TLS context connections are made with, or {@code null} for plain TCP
 */
public record IqClientConfig(
    List<ServerAddress> servers,
    int connectionsPerServer,
    Duration connectTimeout,
    Duration requestTimeout,
    Backoff backoff,
    int pointsPerServer,
    Login login,
    SSLContext tls) {

  public IqClientConfig {
    servers = List.copyOf(servers);
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("at least one server is needed");
    }
    if (servers.stream().distinct().count() != servers.size()) {
      throw new IllegalArgumentException("servers listed twice: " + servers);
    }
    if (connectionsPerServer < 1 || pointsPerServer < 1) {
      throw new IllegalArgumentException(
          "connectionsPerServer and pointsPerServer must be positive");
    }
    Objects.requireNonNull(connectTimeout, "connectTimeout");
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    Objects.requireNonNull(backoff, "backoff");
    Objects.requireNonNull(login, "login");
  }
}
