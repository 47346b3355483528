package io.dendrite.iq.server;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Per-key lease state, keyed by user key but kept apart from the items, so that {@code get ls:x}
 * is an ordinary user key and no client can read or forge a lease. Entries exist only while a
 * lease is held, and lapsed ones are removed when looked at or by the periodic sweep, so the table
 * is bounded by the number of live leases.
 */
final class LeaseTable {

  private final Map<String, KeyLease> leases = new ConcurrentHashMap<>();
  private final Predicate<String> sessionIsLive;
  private final ServerStats stats;

  LeaseTable(Predicate<String> sessionIsLive, ServerStats stats) {
    this.sessionIsLive = sessionIsLive;
    this.stats = stats;
  }

  /**
   * The live lease state of {@code key}, or {@code null}. Expired IQ leases and holders whose
   * session has ended or been aborted are dropped first. Caller holds the key's stripe.
   */
  KeyLease find(String key, long nowMillis) {
    KeyLease lease = leases.get(key);
    if (lease == null) {
      return null;
    }
    if (lease.kind != KeyLease.Kind.NONE && lease.expiresAtMillis <= nowMillis) {
      lease.clearIq();
      stats.leasesExpired.increment();
    }
    lease.readers.removeIf(sessionIsLive.negate());
    if (lease.owner != null && !sessionIsLive.test(lease.owner)) {
      lease.clearOwner();
    }
    if (lease.isEmpty()) {
      leases.remove(key);
      return null;
    }
    return lease;
  }

  /** The lease state of {@code key}, created empty if absent. Caller holds the key's stripe. */
  KeyLease findOrCreate(String key, long nowMillis) {
    KeyLease lease = find(key, nowMillis);
    if (lease == null) {
      lease = new KeyLease();
      leases.put(key, lease);
    }
    return lease;
  }

  /**
   * Makes sure {@code lease} is the entry for {@code key}: a holder that was momentarily empty may
   * have been dropped by {@link #find}. Caller holds the key's stripe.
   */
  void attach(String key, KeyLease lease) {
    leases.put(key, lease);
  }

  /** Forgets {@code key}'s entry once nothing is held on it. Caller holds the key's stripe. */
  void removeIfEmpty(String key, KeyLease lease) {
    if (lease != null && lease.isEmpty()) {
      leases.remove(key, lease);
    }
  }

  /** The keys that have lease state now (a snapshot; look each up again under its stripe). */
  Iterable<String> keys() {
    return java.util.List.copyOf(leases.keySet());
  }

  /** Drops every lapsed lease; run periodically so abandoned leases do not accumulate. */
  void sweep(KeyLocks locks, long nowMillis) {
    for (String key : leases.keySet()) {
      try (KeyLocks.Held held = locks.lock(key)) {
        find(key, nowMillis);
      }
    }
  }

  /** Drops the I leases charged to {@code account}, whose connection closed. */
  void dropInhibitsOf(HeldBytes account, KeyLocks locks, long nowMillis) {
    for (Map.Entry<String, KeyLease> entry : leases.entrySet()) {
      if (!entry.getValue().isInhibitOf(account)) {
        continue;
      }
      String key = entry.getKey();
      try (KeyLocks.Held held = locks.lock(key)) {
        KeyLease lease = find(key, nowMillis);
        if (lease != null && lease.isInhibitOf(account)) {
          lease.clearIq();
          removeIfEmpty(key, lease);
        }
      }
    }
  }

  int size() {
    return leases.size();
  }
}
