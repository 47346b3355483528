package io.dendrite.iq.server;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Makes each connection's {@link Client}: its account under its user's (or, with no login, under the one shared by
 * everyone), both under the server's, whether its user may change pinned items and reserved keys, and whether it may
 * raise fences. User accounts outlive connections, so that what a closed connection left behind still counts until
 * it lapses.
 */
final class Clients {

  private final IqServerConfig config;
  private final Map<String, HeldBytes> users = new ConcurrentHashMap<>();

  /** Every user together: many users, each within its own bound, must not exhaust the server. */
  private final HeldBytes server;

  Clients(IqServerConfig config) {
    this.config = config;
    this.server =
        new HeldBytes("every user together", config.maxHeldTotal(), "--max-held-total", null);
  }

  /**
   * A connection's client once it has logged in as {@code user}, or {@code null} when the server asks for no
   * login.
   */
  Client connect(String user) {
    String name = user == null ? "" : user;
    HeldBytes account =
        users.computeIfAbsent(
            name,
            n ->
                new HeldBytes(
                    user == null ? "the server" : "user " + user,
                    config.maxHeldPerUser(),
                    "--max-held-per-user",
                    server));
    boolean mayChangePinned =
        user == null || config.pinUsers().isEmpty() || config.pinUsers().contains(user);
    boolean mayRaiseFences =
        user == null || config.fenceUsers().isEmpty() || config.fenceUsers().contains(user);
    return new Client(
        user,
        mayChangePinned,
        mayRaiseFences,
        new HeldBytes(
            "this connection", config.maxHeldPerConnection(), "--max-held-per-conn", account));
  }

  /** Bytes held for every user. */
  long held() {
    return server.held();
  }
}
