package io.dendrite.tardis;

import io.dendrite.core.DataStoreUnavailableException;

/**
 * The data store failed a write and the cache tier could not buffer it either, because pinned memory (or, on stock
 * memcached, the servers' memory) ran out during a long outage: the write is not acknowledged and nothing of it was buffered; what was acknowledged before stays
 * buffered. A {@link DataStoreUnavailableException}: the write failed because the data store is down.
 */
public final class TeleportRefusedException extends DataStoreUnavailableException {
  private static final long serialVersionUID = 1L;

  /** Which limit refused the write. */
  public enum Reason {
    /** {@link Tardis.Builder#pinnedBudgetBytes}: this process's budget of pinned bytes is spent. */
    PINNED_BUDGET,
    /** A cache server answered {@code SERVER_ERROR out of pinned memory}. */
    SERVER_PINNED_MEMORY,
    /**
     * A stock memcached run with {@code -M} ({@link Tardis.Builder#stockMemcached}) answered {@code SERVER_ERROR out
     * of memory}: it evicts nothing, so it refuses instead.
     */
    SERVER_MEMORY
  }

  private final Reason reason;

  TeleportRefusedException(String message, Reason reason, Throwable cause, boolean notSent) {
    super(message, cause, notSent);
    this.reason = reason;
  }

  /** Which limit refused the write. */
  public Reason reason() {
    return reason;
  }
}
