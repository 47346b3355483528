package io.dendrite.iq.server;

import java.util.concurrent.atomic.AtomicLong;

/**
 * An account of what clients make the server hold apart from items: leases, staged values, transaction and session
 * records, released tids, fences and a scheduled flush. Each connection has one, whose parent is its user's (or, with
 * no login, everyone's), whose parent is the server's, so that a client can neither hold more than its connection's
 * limit nor escape it by reconnecting (what a closed connection left behind still counts for its user until it
 * lapses with the lease lifetime), and many users, each within its bound, cannot together hold more than the
 * server's.
 *
 * <p>Records are charged through a {@link Charge}, which remembers what it charged, so that however a record goes
 * (released, committed, voided, lapsed, replaced) it credits exactly that back, once.
 */
final class HeldBytes {

  /** What a lease, a tid or sid record or a released tid costs beyond its key and value bytes. */
  static final int RECORD_OVERHEAD = 96;

  /** Thrown when a charge would take an account past its limit; nothing was charged. */
  static final class LimitException extends RuntimeException {
    LimitException(String message) {
      super(message, null, false, false);
    }
  }

  private final String name;
  private final long limit;
  private final String setting;
  private final HeldBytes parent;
  private final AtomicLong held = new AtomicLong();

  HeldBytes(String name, long limit, HeldBytes parent) {
    this(name, limit, null, parent);
  }

  /**
   * @param name who holds, as a refusal names it ("this connection", "user u")
   * @param setting the option that sets {@code limit}, named in a refusal; {@code null} for none
   */
  HeldBytes(String name, long limit, String setting, HeldBytes parent) {
    this.name = name;
    this.limit = limit;
    this.setting = setting;
    this.parent = parent;
  }

  /** Takes {@code bytes} from this account and its parent's, or from neither. */
  void charge(long bytes) {
    reserve(bytes);
    if (parent != null) {
      try {
        parent.charge(bytes);
      } catch (LimitException e) {
        held.addAndGet(-bytes);
        throw e;
      }
    }
  }

  /** Takes {@code bytes} even past the limit: for what ending a client's holdings needs. */
  void chargeAlways(long bytes) {
    held.addAndGet(bytes);
    if (parent != null) {
      parent.chargeAlways(bytes);
    }
  }

  private void reserve(long bytes) {
    long before;
    do {
      before = held.get();
      if (bytes > 0 && before + bytes > limit) {
        throw new LimitException(
            name
                + " holds too much: "
                + before
                + " bytes of leases and staged values, limit "
                + limit
                + (setting == null ? "" : " (" + setting + ")"));
      }
    } while (!held.compareAndSet(before, before + bytes));
  }

  void release(long bytes) {
    held.addAndGet(-bytes);
    if (parent != null) {
      parent.release(bytes);
    }
  }

  long held() {
    return held.get();
  }

  /**
   * A record's running charge on one account. Once released the record is gone: a command that still held the
   * record (it was ended on another connection meanwhile) charges nothing more, or the bytes would never come back.
   */
  static final class Charge {
    private final HeldBytes account;
    private long bytes;
    private boolean released;

    Charge(HeldBytes account) {
      this.account = account;
    }

    HeldBytes account() {
      return account;
    }

    /** Charges {@code more} bytes, or throws {@link LimitException} with nothing charged. */
    synchronized void add(long more) {
      if (released) {
        return;
      }
      account.charge(more);
      bytes += more;
    }

    /** Charges {@code more} bytes even past the limit. */
    synchronized void addAlways(long more) {
      if (released) {
        return;
      }
      account.chargeAlways(more);
      bytes += more;
    }

    /** Credits {@code fewer} of the bytes this charge holds back to its account. */
    synchronized void subtract(long fewer) {
      long credited = Math.min(fewer, bytes);
      bytes -= credited;
      account.release(credited);
    }

    /** Credits everything back, for good: the record is gone. Harmless to call again. */
    synchronized void releaseAll() {
      account.release(bytes);
      bytes = 0;
      released = true;
    }
  }
}
