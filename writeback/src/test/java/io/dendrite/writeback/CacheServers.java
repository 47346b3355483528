package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/** Real IQ servers embedded on loopback ports and one client over them. */
final class CacheServers implements AutoCloseable {
  final List<IqServer> servers = new ArrayList<>();
  final IqClient client;

  CacheServers(int count, long pinnedMemoryBytes) {
    this(count, pinnedMemoryBytes, Duration.ofSeconds(10));
  }

  /** With a lease lifetime short enough that a test outlives the leases a killed process left behind. */
  CacheServers(int count, long pinnedMemoryBytes, Duration leaseLifetime) {
    this(count, pinnedMemoryBytes, leaseLifetime, client -> client);
  }

  /** With client settings of the test's own on top of the defaults here. */
  CacheServers(int count, UnaryOperator<IqClient.Builder> clientSettings) {
    this(count, 64L << 20, Duration.ofSeconds(10), clientSettings);
  }

  private CacheServers(
      int count,
      long pinnedMemoryBytes,
      Duration leaseLifetime,
      UnaryOperator<IqClient.Builder> clientSettings) {
    List<ServerAddress> addresses = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      IqServer server =
          IqServer.start(
              IqServerConfig.builder()
                  .port(0)
                  .pinnedMemoryBytes(pinnedMemoryBytes)
                  .leaseLifetime(leaseLifetime)
                  .build());
      servers.add(server);
      addresses.add(new ServerAddress("127.0.0.1", server.port()));
    }
    client =
        clientSettings
            .apply(IqClient.builder().servers(addresses).requestTimeout(Duration.ofSeconds(2)))
            .build();
  }

  CacheServers(int count) {
    this(count, 64L << 20);
  }

  /** A client of its own on the same servers, as another application process has; the caller closes it. */
  IqClient anotherClient() {
    return IqClient.builder()
        .servers(client.config().servers())
        .requestTimeout(Duration.ofSeconds(2))
        .build();
  }

  /** The servers as {@code host:port,host:port}, for a child process to connect to. */
  String addresses() {
    return String.join(
        ",", client.config().servers().stream().map(a -> a.host() + ":" + a.port()).toList());
  }

  /** Stops server {@code index} for good, as a crashed cache server; its pinned values are gone. */
  void lose(int index) {
    servers.set(index, null).close();
  }

  @Override
  public void close() {
    client.close();
    servers.stream().filter(Objects::nonNull).forEach(IqServer::close);
  }
}
