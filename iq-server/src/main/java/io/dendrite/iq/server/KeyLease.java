package io.dendrite.iq.server;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * All lease state of one key: the IQ-family lease (I, Q-inv, Q-ref or Q-inc, at most one, as in
 * IQ-Twemcached), the staged value that a Q-ref/Q-inc holder is building, and the session layer's
 * C readers and O owner. Lives in {@link LeaseTable}, never in the user key space. Mutated only
 * under the key's stripe.
 */
final class KeyLease {

  /** The IQ-family lease kinds. */
  enum Kind {
    NONE,
    I,
    Q_INV,
    Q_REF,
    Q_INC
  }

  Kind kind = Kind.NONE;

  /** Token of an I, Q-ref or Q-inc lease. */
  long token;

  /** The tid of a Q-ref/Q-inc lease; {@code null} for a tid-less {@code qaread}. */
  String ownerTid;

  /** Tids sharing a Q-inv lease. */
  final Set<String> invalidatingTids = new LinkedHashSet<>();

  /** When the IQ-family lease lapses. */
  long expiresAtMillis;

  /**
   * The fence guard the IQ-family lease was granted under, or null: raising that fence above its epoch voids the
   * lease at once ({@link ServerState#voidLeasesFencedOut}), since its holder can no longer use it.
   */
  Fences.Guard grantedUnder;

  /** Whether a staged version exists; {@link #staged} {@code null} then means "delete on commit". */
  boolean hasStaged;

  Item staged;

  /**
   * The CAS unique of the value a Q-ref/Q-inc lease made expire with it ({@link ServerState#quarantineValue}), and
   * that value's own expiry, given back if the lease ends without changing it ({@code release}, {@code unlease});
   * {@code 0} when it made none expire.
   */
  long quarantinedCas;

  long quarantinedValueExpiry;

  /** What the IQ-family lease and its staged value are charged to; {@code null} while none is held. */
  private HeldBytes.Charge charge;

  private long stagedBytes;

  /** Sessions holding a shared C lease. */
  final Set<String> readers = new LinkedHashSet<>();

  /** The session holding the O lease, which also quarantines the key like a Q lease. */
  String owner;

  /** O-inv (from {@code oqreg}): the owner deletes the key at {@code dcommit}. */
  boolean ownerInvalidates;

  boolean isQuarantine() {
    return kind == Kind.Q_INV || kind == Kind.Q_REF || kind == Kind.Q_INC;
  }

  /** A Q-ref/Q-inc lease owned by {@code tid}, or a Q-inv lease shared by it. */
  boolean heldByTid(String tid) {
    return (kind == Kind.Q_INV && invalidatingTids.contains(tid))
        || ((kind == Kind.Q_REF || kind == Kind.Q_INC) && tid.equals(ownerTid));
  }

  /** Whether {@code token} names this key's I, Q-ref or Q-inc lease. */
  boolean tokenMatches(long candidate) {
    return candidate != 0
        && (kind == Kind.I || kind == Kind.Q_REF || kind == Kind.Q_INC)
        && token == candidate;
  }

  /**
   * Grants a fresh IQ-family lease charged to {@code newCharge}; when that charge is refused, nothing changes.
   *
   * @throws HeldBytes.LimitException when the charge would take the client past what it may hold
   */
  void grant(
      Kind newKind,
      long newToken,
      String tid,
      long expiresAt,
      String key,
      HeldBytes.Charge newCharge) {
    newCharge.add(HeldBytes.RECORD_OVERHEAD + key.length());
    clearIq();
    charge = newCharge;
    kind = newKind;
    token = newToken;
    ownerTid = tid;
    expiresAtMillis = expiresAt;
    grantedUnder = Fences.current();
  }

  /**
   * Stages {@code item} in place of what was staged, charging the difference to the lease's charge.
   *
   * @throws HeldBytes.LimitException when the client may not hold that much more; nothing changes then
   */
  void stage(Item item) {
    long bytes = item == null ? 0 : item.value().length;
    if (charge != null) {
      charge.add(bytes);
      charge.subtract(stagedBytes);
    }
    stagedBytes = bytes;
    hasStaged = true;
    staged = item;
  }

  /**
   * Charges a lease that was not granted through {@link #grant} (a Q-inv lease) to {@code newCharge}.
   *
   * @throws HeldBytes.LimitException when the charge would take the client past what it may hold
   */
  void chargeTo(HeldBytes.Charge newCharge, String key) {
    newCharge.add(HeldBytes.RECORD_OVERHEAD + key.length());
    charge = newCharge;
    grantedUnder = Fences.current();
  }

  /** Whether this key holds an I lease charged to {@code account}. */
  boolean isInhibitOf(HeldBytes account) {
    return kind == Kind.I && charge != null && charge.account() == account;
  }

  /** Drops the IQ-family lease and whatever it had staged. */
  void clearIq() {
    kind = Kind.NONE;
    token = 0;
    ownerTid = null;
    invalidatingTids.clear();
    expiresAtMillis = 0;
    grantedUnder = null;
    hasStaged = false;
    staged = null;
    quarantinedCas = 0;
    quarantinedValueExpiry = 0;
    if (charge != null) {
      charge.releaseAll();
      charge = null;
    }
    stagedBytes = 0;
  }

  void clearOwner() {
    owner = null;
    ownerInvalidates = false;
  }

  boolean isEmpty() {
    return kind == Kind.NONE && readers.isEmpty() && owner == null;
  }
}
