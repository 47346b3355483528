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

  /** The keys one transaction touched here, charged, with the tid, to the connection that began it. */
  static final class Transaction {
    final Set<String> keys = ConcurrentHashMap.newKeySet();
    volatile long expiresAtMillis;
    private final HeldBytes.Charge charge;

    private Transaction(String tid, HeldBytes.Charge charge) {
      this.charge = charge;
      charge.add(HeldBytes.RECORD_OVERHEAD + tid.length());
    }
  }

  /** A released tid: until when it stays refused, and what remembering it is charged to. */
  private record Released(long untilMillis, HeldBytes.Charge charge) {}

  private final Map<String, Transaction> transactions = new ConcurrentHashMap<>();

  private final Map<String, Released> released = new ConcurrentHashMap<>();

  /**
   * Adds {@code key} to {@code tid}'s record, creating or renewing it; a new record is charged to {@code client}.
   *
   * @throws HeldBytes.LimitException when the client may not hold more; the record is then unchanged
   */
  void register(String tid, String key, long nowMillis, long expiresAtMillis, Client client) {
    Transaction tx =
        transactions.compute(
            tid,
            (id, existing) -> {
              if (existing != null && existing.expiresAtMillis > nowMillis) {
                return existing;
              }
              Transaction fresh = new Transaction(id, client.charge());
              if (existing != null) {
                existing.charge.releaseAll();
              }
              return fresh;
            });
    if (!tx.keys.contains(key)) {
      tx.charge.add(HeldBytes.RECORD_OVERHEAD + key.length());
      tx.keys.add(key);
    }
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
    if (transactions.remove(tid, tx)) {
      tx.charge.releaseAll();
    }
  }

  void sweep(long nowMillis) {
    transactions.forEach(
        (tid, tx) -> {
          if (tx.expiresAtMillis <= nowMillis) {
            remove(tid, tx);
          }
        });
    released.forEach(
        (tid, entry) -> {
          if (entry.untilMillis() <= nowMillis && released.remove(tid, entry)) {
            entry.charge().releaseAll();
          }
        });
  }

  /**
   * Remembers that {@code tid} was released: it may take no lease here until {@code untilMillis}. Charged to {@code
   * client}: even past its limit when the tid has a live record, since a release is how a client at its limit frees
   * what it holds (and the record it ends costs at least as much), within it when there is none.
   *
   * @throws HeldBytes.LimitException when the tid has no live record and the client may not hold more; nothing is
   *     remembered then
   */
  void markReleased(String tid, long nowMillis, long untilMillis, Client client) {
    HeldBytes.Charge charge = client.charge();
    if (find(tid, nowMillis) != null) {
      charge.addAlways(HeldBytes.RECORD_OVERHEAD + tid.length());
    } else {
      charge.add(HeldBytes.RECORD_OVERHEAD + tid.length());
    }
    Released previous = released.put(tid, new Released(untilMillis, charge));
    if (previous != null) {
      previous.charge().releaseAll();
    }
  }

  /** Whether {@code tid} was released (within the last lease lifetime), so it may take no lease. */
  boolean wasReleased(String tid, long nowMillis) {
    Released entry = released.get(tid);
    return entry != null && entry.untilMillis() > nowMillis;
  }

  int size() {
    return transactions.size();
  }
}
