package io.dendrite.iq.server;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records, per client-chosen tid, the keys the transaction registered on this server, so that
 * {@code commit}, {@code dar} and {@code release} can find them. A record lapses with the lease
 * lifetime after its latest registration. Kept apart from the user key space.
 *
 * <p>A tid that was released stays known as released for one lease lifetime: a request of that transaction which
 * was still on its way (a client that gave up waiting for it released the transaction on another connection, and
 * the server read the release first) must not take a lease nobody will ever release.
 */
final class TransactionTable {

  /** The keys one transaction touched here. */
  static final class Transaction {
    final Set<String> keys = ConcurrentHashMap.newKeySet();
    volatile long expiresAtMillis;
  }

  private final Map<String, Transaction> transactions = new ConcurrentHashMap<>();

  /** Released tids, until when they stay refused. */
  private final Map<String, Long> released = new ConcurrentHashMap<>();

  /** Adds {@code key} to {@code tid}'s record, creating or renewing it. */
  void register(String tid, String key, long nowMillis, long expiresAtMillis) {
    Transaction tx =
        transactions.compute(
            tid,
            (id, existing) ->
                existing == null || existing.expiresAtMillis <= nowMillis
                    ? new Transaction()
                    : existing);
    tx.keys.add(key);
    tx.expiresAtMillis = Math.max(tx.expiresAtMillis, expiresAtMillis);
  }

  boolean contains(String tid, String key, long nowMillis) {
    Transaction tx = transactions.get(tid);
    return tx != null && tx.expiresAtMillis > nowMillis && tx.keys.contains(key);
  }

  /** The live record of {@code tid}, or {@code null}. */
  Transaction find(String tid, long nowMillis) {
    Transaction tx = transactions.get(tid);
    return tx != null && tx.expiresAtMillis > nowMillis ? tx : null;
  }

  /** Removes {@code tid}'s record if it is still {@code tx}. */
  void remove(String tid, Transaction tx) {
    transactions.remove(tid, tx);
  }

  void sweep(long nowMillis) {
    transactions.values().removeIf(tx -> tx.expiresAtMillis <= nowMillis);
    released.values().removeIf(until -> until <= nowMillis);
  }

  /** Remembers that {@code tid} was released: it may take no lease here until {@code untilMillis}. */
  void markReleased(String tid, long untilMillis) {
    released.put(tid, untilMillis);
  }

  /** Whether {@code tid} was released (within the last lease lifetime), so it may take no lease. */
  boolean wasReleased(String tid, long nowMillis) {
    Long until = released.get(tid);
    return until != null && until > nowMillis;
  }

  int size() {
    return transactions.size();
  }
}
