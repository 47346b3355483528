package io.dendrite.tardis;

import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.kernel.BufferedWriteLocks;
import io.dendrite.writeback.kernel.PinnedReplicas;
import io.dendrite.writeback.kernel.RedleaseLocks;
import java.time.Duration;

/**
 * What the cache servers offer, and so how TARDIS keeps its state on them: our IQ servers (I/Q leases, pinning,
 * fenced commits), or unmodified memcached run with {@code -M} (plain commands only: locks are keys that lapse, see
 * {@link RedleaseLocks}, and values change by {@code cas} on what was read under them).
 */
final class CacheTier {
  private final IqClient cache;

  /** The lifetime of a lock key on stock memcached; null on IQ servers, which have leases. */
  private final Duration lockTtl;

  /** Whether values under a lock change only conditionally on what was read under it (off: a negative control). */
  private final boolean conditional;

  private CacheTier(IqClient cache, Duration lockTtl, boolean conditional) {
    this.cache = cache;
    this.lockTtl = lockTtl;
    this.conditional = conditional;
  }

  /**
   * {@code conditional}: false only for the negative control of the tests (a copy whose write's commit failed is
   * kept).
   */
  static CacheTier iqServers(IqClient cache, boolean conditional) {
    return new CacheTier(cache, null, conditional);
  }

  /** {@code conditional}: false only for the negative control of the tests ({@link RedleaseLocks#unconditional}). */
  static CacheTier stockMemcached(IqClient cache, Duration lockTtl, boolean conditional) {
    return new CacheTier(cache, lockTtl, conditional);
  }

  /** Whether the servers grant I/Q leases (ours do; stock memcached does not). */
  boolean hasLeases() {
    return lockTtl == null;
  }

  /** Values kept on {@code count} servers each: pinned on IQ servers, plain on memcached (which {@code -M} keeps). */
  PinnedReplicas replicas(int count) {
    return hasLeases() ? new PinnedReplicas(cache, count) : PinnedReplicas.unpinned(cache, count);
  }

  /** The locks of values kept on {@code replicas}; a taker waits up to {@code timeout} for one held elsewhere. */
  BufferedWriteLocks locks(PinnedReplicas replicas, Duration timeout) {
    return hasLeases()
        ? BufferedWriteLocks.replicaLeases(replicas, timeout)
        : conditional
            ? new RedleaseLocks(replicas, lockTtl, timeout)
            : RedleaseLocks.unconditional(replicas, lockTtl, timeout);
  }

  /** How documents' cached copies are read, filled and refreshed. */
  DocumentCopies documentCopies(Duration lockTimeout) {
    if (hasLeases()) {
      return new LeasedCopies(cache, lockTimeout, conditional);
    }
    PinnedReplicas copies = replicas(1);
    return new LockedCopies(copies, locks(copies, lockTimeout));
  }
}
