package io.dendrite.core;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import io.dendrite.testsupport.faults.CuttableProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Real IQ servers embedded on loopback ports, optionally each behind a {@link CuttableProxy}, and one client over them. */
final class CacheTier implements AutoCloseable {
  final List<IqServer> servers = new ArrayList<>();
  final List<CuttableProxy> proxies = new ArrayList<>();
  final IqClient client;

  CacheTier(int count) {
    this(count, false);
  }

  CacheTier(int count, boolean behindProxies) {
    List<ServerAddress> addresses = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      IqServer server =
          IqServer.start(
              IqServerConfig.builder().port(0).leaseLifetime(Duration.ofMillis(10_000)).build());
      servers.add(server);
      int port = server.port();
      if (behindProxies) {
        try {
          CuttableProxy proxy = new CuttableProxy(port);
          proxies.add(proxy);
          port = proxy.port();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      addresses.add(new ServerAddress("127.0.0.1", port));
    }
    client = IqClient.builder().servers(addresses).requestTimeout(Duration.ofSeconds(2)).build();
  }

  /** The index of the server the client's ring places {@code key} on. */
  int serverOf(String key) {
    ServerAddress address = client.serversFor(key, 1).get(0);
    for (int i = 0; i < servers.size(); i++) {
      int port = proxies.isEmpty() ? servers.get(i).port() : proxies.get(i).port();
      if (address.port() == port) {
        return i;
      }
    }
    throw new IllegalStateException("no server for " + address);
  }

  @Override
  public void close() throws IOException {
    client.close();
    for (CuttableProxy proxy : proxies) {
      proxy.close();
    }
    servers.forEach(IqServer::close);
  }
}
