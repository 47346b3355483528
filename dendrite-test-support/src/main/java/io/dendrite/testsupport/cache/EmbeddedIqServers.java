package io.dendrite.testsupport.cache;

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
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * Real IQ servers embedded in the test's JVM on loopback ports, optionally each behind a {@link CuttableProxy}, and
 * one client over them: the one fixture every module's tests use for a cache tier (the iq-server module's own tests
 * keep theirs, as this module depends on it).
 *
 * <pre>{@code
 * try (EmbeddedIqServers cache = EmbeddedIqServers.builder().count(2).pinnedMemoryBytes(64 * 1024).start()) {
 *   cache.client.set("k", value);
 *   cache.lose(0); // a crashed server: its pinned values are gone
 * }
 * }</pre>
 */
public final class EmbeddedIqServers implements AutoCloseable {
  /** The servers, by index; {@code null} where one was {@link #lose lost}. */
  public final List<IqServer> servers = new ArrayList<>();

  /** The proxies in front of the servers, by index; empty unless {@link Builder#behindProxies}. */
  public final List<CuttableProxy> proxies = new ArrayList<>();

  /** A client over every server (through its proxy, if any); closed with the fixture. */
  public final IqClient client;

  private EmbeddedIqServers(Builder builder) {
    List<ServerAddress> addresses = new ArrayList<>();
    try {
      for (int i = 0; i < builder.count; i++) {
        IqServer server =
            IqServer.start(
                builder
                    .serverSettings
                    .apply(
                        IqServerConfig.builder()
                            .port(0)
                            .pinnedMemoryBytes(builder.pinnedMemoryBytes)
                            .leaseLifetime(builder.leaseLifetime))
                    .build());
        servers.add(server);
        int port = server.port();
        if (builder.behindProxies) {
          CuttableProxy proxy = new CuttableProxy(port);
          proxies.add(proxy);
          port = proxy.port();
        }
        addresses.add(new ServerAddress("127.0.0.1", port));
      }
    } catch (IOException e) {
      closeAll();
      throw new UncheckedIOException(e);
    }
    client =
        builder
            .clientSettings
            .apply(IqClient.builder().servers(addresses).requestTimeout(Duration.ofSeconds(2)))
            .build();
  }

  /** {@code count} servers with the defaults (10 s leases, 64 MiB pinned, no proxies). */
  public static EmbeddedIqServers start(int count) {
    return builder().count(count).start();
  }

  /** Starts configuring the fixture. */
  public static Builder builder() {
    return new Builder();
  }

  /** A client of its own on the same servers, as another application process has; the caller closes it. */
  public IqClient anotherClient() {
    return IqClient.builder()
        .servers(client.config().servers())
        .requestTimeout(Duration.ofSeconds(2))
        .build();
  }

  /** The servers as {@code host:port,host:port}, for a child process to connect to. */
  public String addresses() {
    return String.join(
        ",", client.config().servers().stream().map(a -> a.host() + ":" + a.port()).toList());
  }

  /** The index of the server the client's ring places {@code key} on. */
  public int serverOf(String key) {
    ServerAddress address = client.replicaPlacement().serversFor(key, 1).get(0);
    int index = client.config().servers().indexOf(address);
    if (index < 0) {
      throw new IllegalStateException("no server for " + address);
    }
    return index;
  }

  /** Stops server {@code index} for good, as a crashed cache server; its pinned values are gone. */
  public void lose(int index) {
    servers.set(index, null).close();
  }

  @Override
  public void close() {
    client.close();
    closeAll();
  }

  private void closeAll() {
    proxies.forEach(CuttableProxy::close);
    servers.stream().filter(Objects::nonNull).forEach(IqServer::close);
  }

  /** Configures {@link EmbeddedIqServers}. */
  public static final class Builder {
    private int count = 1;
    private long pinnedMemoryBytes = 64L << 20;
    private Duration leaseLifetime = Duration.ofSeconds(10);
    private boolean behindProxies;
    private UnaryOperator<IqClient.Builder> clientSettings = client -> client;
    private UnaryOperator<IqServerConfig.Builder> serverSettings = server -> server;

    private Builder() {}

    /** How many servers (default 1). */
    public Builder count(int count) {
      if (count < 1) {
        throw new IllegalArgumentException("count must be at least 1, got " + count);
      }
      this.count = count;
      return this;
    }

    /** Each server's pinned quota (default 64 MiB). */
    public Builder pinnedMemoryBytes(long bytes) {
      this.pinnedMemoryBytes = bytes;
      return this;
    }

    /** Each server's lease lifetime (default 10 s): short, so a test outlives the leases a killed process left. */
    public Builder leaseLifetime(Duration lifetime) {
      this.leaseLifetime = Objects.requireNonNull(lifetime, "lifetime");
      return this;
    }

    /** Puts each server behind a {@link CuttableProxy}, which the test can cut and restore. */
    public Builder behindProxies() {
      this.behindProxies = true;
      return this;
    }

    /** Client settings of the test's own on top of the defaults (2 s request timeout). */
    public Builder client(UnaryOperator<IqClient.Builder> settings) {
      this.clientSettings = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /** Server settings of the test's own on top of the defaults (a login, pin users...). */
    public Builder server(UnaryOperator<IqServerConfig.Builder> settings) {
      this.serverSettings = Objects.requireNonNull(settings, "settings");
      return this;
    }

    public EmbeddedIqServers start() {
      return new EmbeddedIqServers(this);
    }
  }
}
