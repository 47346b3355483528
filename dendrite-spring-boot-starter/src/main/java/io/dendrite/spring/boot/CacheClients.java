package io.dendrite.spring.boot;

import io.dendrite.iq.client.ClientTls;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The {@link IqClient} that {@code dendrite.cache.*} describes, each value checked and refused by its name. */
final class CacheClients {
  private static final String PREFIX = "dendrite.cache.";

  private CacheClients() {}

  /** The client; it connects on first use, so no server needs to answer yet. */
  static IqClient open(DendriteProperties.Cache cache) {
    IqClient.Builder client =
        IqClient.builder()
            .servers(servers(cache.servers()))
            .connectTimeout(positive("connect-timeout", cache.connectTimeout()))
            .requestTimeout(positive("request-timeout", cache.requestTimeout()));
    if (cache.connectionsPerServer() < 1) {
      throw PropertyCheck.invalid(
          PREFIX + "connections-per-server", cache.connectionsPerServer(), "must be at least 1");
    }
    client.connectionsPerServer(cache.connectionsPerServer());
    DendriteProperties.Login login = cache.login();
    if (login.user() != null) {
      PropertyCheck.checked(
          PREFIX + "login.user", login.user(), () -> client.login(login.user(), login.password()));
    } else if (login.password() != null) {
      throw PropertyCheck.invalid(
          PREFIX + "login.user", null, "dendrite.cache.login.password is set without a user");
    }
    DendriteProperties.Tls tls = cache.tls();
    if (tls.trustStore() != null) {
      char[] password =
          tls.trustStorePassword() == null ? new char[0] : tls.trustStorePassword().toCharArray();
      client.tls(
          PropertyCheck.checked(
              PREFIX + "tls.trust-store",
              tls.trustStore(),
              () -> ClientTls.trusting(tls.trustStore(), password)));
    }
    return client.build();
  }

  private static List<ServerAddress> servers(List<String> servers) {
    List<ServerAddress> addresses = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      String server = servers.get(i);
      addresses.add(
          PropertyCheck.checked(
              PREFIX + "servers[" + i + "]", server, () -> ServerAddress.parse(server)));
    }
    return addresses;
  }

  private static Duration positive(String name, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw PropertyCheck.invalid(PREFIX + name, value, "must be positive");
    }
    return value;
  }
}
