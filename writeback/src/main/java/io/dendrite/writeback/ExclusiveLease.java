package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.RefreshLease;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import java.util.function.Supplier;

/**
 * The exclusive Q lease that serializes everyone who changes one replicated value (a buffered write or a
 * pending-writes partition): writers, drain threads and read misses, in any process.
 *
 * <p>The lease lives on a key of its own, {@code L:<name>}, not on the value's key: the value is replicated with
 * plain pinned sets on R servers, and the lease is only the mutual exclusion around them. When the server that
 * owns {@code L:<name>} is unreachable (a lost cache server) the lease falls over to {@code L:<name>#1},
 * {@code L:<name>#2}, ...: every process walks the same list, so they agree on the first reachable one and the
 * replicas on the surviving servers can still be drained. Only a server that is down (refuses or drops the
 * connection) is failed over; one that does not answer in time may be stalled with the lease still granted to
 * someone else, so it is asked again, and past a few timeouts the lease is not taken at all. Two processes that disagree about a server's
 * reachability, or a holder that outlives the server's lease lifetime, can both believe they hold it; {@link
 * #stillHeld()} narrows that window before every destructive step, and keeping work under a lease well below the
 * server's lease lifetime keeps it closed in practice.
 */
final class ExclusiveLease implements AutoCloseable {
  /** How many servers may be lost before a lease cannot be taken at all. */
  private static final int FAILOVER_CANDIDATES = 8;
  private static final byte[] HELD_MARKER = {1};
  /** How many times a server that does not answer is asked again before the lease is given up as not taken. */
  private static final int TIMEOUTS_BEFORE_GIVING_UP = 3;

  private final Transaction transaction;
  private final RefreshLease lease;

  private ExclusiveLease(Transaction transaction, RefreshLease lease) {
    this.transaction = transaction;
    this.lease = lease;
  }

  /**
   * Takes the lease named {@code name}, waiting while another holder keeps it (leases expire, so a crashed
   * holder does not block forever).
   *
   * @throws IqConnectionException when no failover candidate's server is reachable
   */
  static ExclusiveLease acquire(IqClient cache, String name) {
    IqConnectionException lastUnreachable = null;
    int timeouts = 0;
    for (int candidate = 0; candidate < FAILOVER_CANDIDATES; candidate++) {
      String key = candidate == 0 ? "L:" + name : "L:" + name + "#" + candidate;
      while (true) {
        // A fresh transaction per attempt: one that touched an unreachable server could not be ended cleanly.
        Transaction transaction = cache.beginTransaction();
        RefreshResult result;
        try {
          result = transaction.readForUpdate(key);
        } catch (IqConnectionException unreachable) {
          lastUnreachable = unreachable;
          if (unreachable.timedOut() && ++timeouts < TIMEOUTS_BEFORE_GIVING_UP) {
            // A stalled server may still hold this lease for someone else: failing over would make two holders.
            continue;
          }
          if (unreachable.timedOut()) {
            throw unreachable;
          }
          break;
        }
        if (result instanceof RefreshResult.Granted granted) {
          return new ExclusiveLease(transaction, granted.lease());
        }
        transaction.release();
      }
    }
    throw lastUnreachable;
  }

  /** Whether the server still knows this lease (it was neither voided nor expired). */
  boolean stillHeld() {
    try {
      return lease.swap(HELD_MARKER) == Outcome.OK;
    } catch (IqConnectionException unreachable) {
      return false;
    }
  }

  /** @throws LeaseLostException when {@link #stillHeld()} is false */
  void ensureHeld() {
    if (!stillHeld()) {
      throw new LeaseLostException(lease.key());
    }
  }

  /** Releases the lease; the staged marker is discarded, so the lease key never holds a value. */
  @Override
  public void close() {
    try {
      transaction.release();
    } catch (IqConnectionException unreachable) {
      // The server is gone and its leases with it: nothing is left to release.
    }
  }

  /**
   * Runs {@code step} again when it lost its lease before a destructive step: nothing was changed then, or only
   * what is safe to redo (an idempotent form persisted or applied, a session applied exactly once), so a retry is
   * exact.
   */
  static <T> T untilKept(Supplier<T> step) {
    while (true) {
      try {
        return step.get();
      } catch (LeaseLostException lost) {
        // Another holder took over meanwhile; start again under a fresh lease.
      }
    }
  }

  /** {@link #untilKept(Supplier)} for a step without a result. */
  static void untilKept(Runnable step) {
    untilKept(() -> {
      step.run();
      return null;
    });
  }

  /** The lease expired or was lost with its server before a step that needed it; the step was not taken. */
  static final class LeaseLostException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    LeaseLostException(String key) {
      super("lost the lease " + key);
    }
  }
}
