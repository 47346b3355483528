package io.dendrite.core;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Real IQ servers embedded on loopback ports, and one client over them. */
final class CacheTier implements AutoCloseable {
  final List<IqServer> servers = new ArrayList<>();
  final IqClient client;

  CacheTier(int count) {
    for (int i = 0; i < count; i++) {
      servers.add(IqServer.start(IqServerConfig.builder().port(0).leaseMillis(10_000).build()));
    }
    client = IqClient.builder()
        .servers(servers.stream().map(server -> new ServerAddress("127.0.0.1", server.port())).toList())
        .requestTimeout(Duration.ofSeconds(5))
        .build();
  }

  @Override
  public void close() {
    client.close();
    servers.forEach(IqServer::close);
  }
}
