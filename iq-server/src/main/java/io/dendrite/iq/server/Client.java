package io.dendrite.iq.server;

/**
 * One connection's client as the commands see it: who logged in, whether it may change pinned items and reserved
 * keys, whether it may raise fences, and the account of what it makes the server hold.
 *
 * <p>Tids and sids are chosen by clients, so two users could pick the same one, or a stranger could name another
 * user's to end its leases. Each user's tids and sids are therefore its own: {@link #own} files them under the user
 * name, and another user's same name is a different transaction.
 */
final class Client {

  private final String user;
  private final boolean mayChangePinned;
  private final boolean mayRaiseFences;
  private final HeldBytes held;

  /** A pinned item was stored through this connection ({@link Handover}); set and read on its event loop. */
  boolean wrotePinned;

  /** It said {@code pmoved} while the server was leaving, and stored no pinned item since ({@link Handover}). */
  volatile boolean moved;

  /**
   * @param user the logged-in user, or {@code null} when the server asks for no login
   */
  Client(String user, boolean mayChangePinned, boolean mayRaiseFences, HeldBytes held) {
    this.user = user;
    this.mayChangePinned = mayChangePinned;
    this.mayRaiseFences = mayRaiseFences;
    this.held = held;
  }

  /** The user's own name for a tid or sid: user names hold no space, keys none either, so no two users collide. */
  String own(String tidOrSid) {
    return user == null ? tidOrSid : user + ' ' + tidOrSid;
  }

  boolean mayChangePinned() {
    return mayChangePinned;
  }

  boolean mayRaiseFences() {
    return mayRaiseFences;
  }

  String user() {
    return user == null ? "(no login)" : user;
  }

  HeldBytes held() {
    return held;
  }

  /** A new charge on this connection's account. */
  HeldBytes.Charge charge() {
    return new HeldBytes.Charge(held);
  }
}
