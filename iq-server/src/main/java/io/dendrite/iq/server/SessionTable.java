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

  /** One session's record, charged, with the sid, to the connection that began it. */
  static final class Session {
    final Set<String> keys = ConcurrentHashMap.newKeySet();
    private final Map<String, StagedChange> staged = new ConcurrentHashMap<>();
    final long expiresAtMillis;
    volatile boolean aborted;
    private final Client client;
    private final HeldBytes.Charge charge;

    Session(String sid, long expiresAtMillis, Client client) {
      this.expiresAtMillis = expiresAtMillis;
      this.client = client;
      this.charge = client.charge();
      charge.add(HeldBytes.RECORD_OVERHEAD + sid.length());
    }

    /** The client that began the session: sids are per user, so every command of it comes from its user. */
    Client client() {
      return client;
    }

    /** Files {@code key} under the session, charging it; caller holds the key's stripe. */
    void addKey(String key) {
      if (!keys.contains(key)) {
        charge.add(HeldBytes.RECORD_OVERHEAD + key.length());
        keys.add(key);
      }
    }

    StagedChange staged(String key) {
      return staged.get(key);
    }

    /** Stages {@code change} for {@code key} in place of any earlier one, charging the difference. */
    void stage(String key, StagedChange change) {
      charge.add(sizeOf(change));
      StagedChange previous = staged.put(key, change);
      charge.subtract(sizeOf(previous));
    }

    private void release() {
      charge.releaseAll();
    }

    private static long sizeOf(StagedChange change) {
      if (change instanceof StagedChange.Replace replace) {
        return replace.item().value().length;
      }
      if (change instanceof StagedChange.Deltas deltas) {
        return deltas.prefix().length + deltas.suffix().length;
      }
      return 0;
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

  /** The unexpired record of {@code sid}, a fresh one charged to {@code client} if there is none. */
  Session findOrCreate(String sid, Client client) {
    long now = clock.getAsLong();
    return sessions.compute(
        sid,
        (id, existing) -> {
          if (existing != null && existing.expiresAtMillis > now) {
            return existing;
          }
          Session fresh = new Session(id, now + leaseMillis, client);
          if (existing != null) {
            existing.release();
          }
          return fresh;
        });
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
    if (sessions.remove(sid, session)) {
      session.release();
    }
  }

  void sweep() {
    long now = clock.getAsLong();
    sessions.forEach(
        (sid, session) -> {
          if (session.expiresAtMillis <= now) {
            remove(sid, session);
          }
        });
  }

  int size() {
    return sessions.size();
  }
}
