package io.dendrite.iq.server;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Session records of the C/O (session) family, keyed by client-chosen sid, kept apart from the
 * user key space. A session is created by its first command and lapses one lease lifetime later.
 * Another session's writer can abort it; that only flips its state: its leases then count as gone
 * wherever they are looked at ({@link LeaseTable#find}), and the client learns of the abort on its
 * next command.
 */
final class SessionTable {

  /** One session's record. */
  static final class Session {
    final Set<String> keys = ConcurrentHashMap.newKeySet();
    final Map<String, StagedChange> staged = new ConcurrentHashMap<>();
    final long expiresAtMillis;
    volatile boolean aborted;

    Session(long expiresAtMillis) {
      this.expiresAtMillis = expiresAtMillis;
    }
  }

  private final Map<String, Session> sessions = new ConcurrentHashMap<>();
  private final java.util.function.LongSupplier clock;
  private final long leaseMillis;
  private final ServerStats stats;

  SessionTable(java.util.function.LongSupplier clock, long leaseMillis, ServerStats stats) {
    this.clock = clock;
    this.leaseMillis = leaseMillis;
    this.stats = stats;
  }

  /** The unexpired record of {@code sid} (aborted or not), or {@code null}. */
  Session find(String sid) {
    Session session = sessions.get(sid);
    return session != null && session.expiresAtMillis > clock.getAsLong() ? session : null;
  }

  /** The unexpired record of {@code sid}, a fresh one if there is none. */
  Session findOrCreate(String sid) {
    long now = clock.getAsLong();
    return sessions.compute(
        sid,
        (id, existing) ->
            existing == null || existing.expiresAtMillis <= now
                ? new Session(now + leaseMillis)
                : existing);
  }

  /** Whether {@code sid} names a session that may still hold leases. */
  boolean isLive(String sid) {
    Session session = find(sid);
    return session != null && !session.aborted;
  }

  /** Marks {@code sid} aborted; its leases stop counting from now on. */
  void abort(String sid) {
    Session session = sessions.get(sid);
    if (session != null && !session.aborted) {
      session.aborted = true;
      stats.sessionsAborted.increment();
    }
  }

  void remove(String sid, Session session) {
    sessions.remove(sid, session);
  }

  void sweep() {
    long now = clock.getAsLong();
    sessions.values().removeIf(session -> session.expiresAtMillis <= now);
  }

  int size() {
    return sessions.size();
  }
}
