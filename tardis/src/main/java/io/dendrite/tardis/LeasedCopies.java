package io.dendrite.tardis;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.RefreshLease;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import io.dendrite.writeback.change.ChangeSequence;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cached copies on our IQ servers: a miss fills under the document's I lease, a write runs under its Q lease and
 * swaps the refreshed copy in; a write's Q lease voids the I leases of misses that overlapped it, so their fills are
 * not stored.
 *
 * <p>A taker waits up to the lock timeout for a lease another holds, as for a buffered write's lock, not just the
 * client's backoff deadline (2 s by default): when the database stops answering, the writer that finds out holds
 * its document's Q lease for the store's whole timeout, and the writers queued behind it on a hot document gave up
 * before failed mode let them teleport (16 failed writes in the first second of a zipfian outage).
 */
final class LeasedCopies implements DocumentCopies {
  private static final Logger log = LoggerFactory.getLogger(LeasedCopies.class);

  private final IqClient cache;
  private final Duration leaseWait;
  private final boolean dropWhenNotCommitted;

  /** {@code dropWhenNotCommitted}: false only for the negative control of the tests. */
  LeasedCopies(IqClient cache, Duration leaseWait, boolean dropWhenNotCommitted) {
    this.cache = cache;
    this.leaseWait = leaseWait;
    this.dropWhenNotCommitted = dropWhenNotCommitted;
  }

  @Override
  public Optional<Map<String, Object>> read(String cacheKey, Load load) {
    long giveUpAt = System.nanoTime() + leaseWait.toNanos();
    ReadResult result = cache.read(cacheKey);
    while (result instanceof ReadResult.Busy && System.nanoTime() < giveUpAt) {
      result = cache.read(cacheKey);
    }
    if (result instanceof ReadResult.Hit hit) {
      return CachedDocuments.decode(hit.value().data());
    }
    if (result instanceof ReadResult.Busy busy) {
      throw new IqException(
          "another process kept the lease on " + cacheKey + " for " + busy.waited());
    }
    LeaseHandle lease = result instanceof ReadResult.Leased leased ? leased.lease() : null;
    try {
      // The fill clears the document's pending marker: the load applied any buffered write first.
      Optional<Map<String, Object>> fields = load.load(lease == null ? null : lease.pending());
      if (lease != null) {
        lease.fill(CachedDocuments.encode(fields));
      }
      return fields;
    } finally {
      if (lease != null) {
        lease.close();
      }
    }
  }

  @Override
  public void write(String cacheKey, ChangeSequence changes, DurableWrite durable) {
    Transaction transaction = cache.beginTransaction();
    try {
      long giveUpAt = System.nanoTime() + leaseWait.toNanos();
      RefreshResult refresh = transaction.readForUpdate(cacheKey);
      while (refresh instanceof ReadResult.Busy && System.nanoTime() < giveUpAt) {
        refresh = transaction.readForUpdate(cacheKey);
      }
      if (!(refresh instanceof RefreshResult.Granted granted)) {
        throw new IqException("another writer kept the lease on " + cacheKey + " for " + leaseWait);
      }
      RefreshLease lease = granted.lease();
      boolean keepMarker = durable.run(lease.pending());
      // Durable from here: the write is acknowledged whatever happens to the cached copy.
      try {
        if (lease.current().isPresent()) {
          Optional<Map<String, Object>> after =
              changes.applyTo(CachedDocuments.decode(lease.current().get().data()));
          lease.swap(CachedDocuments.encode(after));
        }
        Outcome committed = transaction.commit(keepMarker);
        if (committed != Outcome.OK && dropWhenNotCommitted) {
          // The lease lapsed while the write was made durable (a data store timeout, then a wait
          // for the buffered write's lock): the server dropped the refreshed copy, and the old one
          // went with the lease, but a read may have filled it again from the database before this
          // write (and a server that keeps values on a lapse kept the old one); a later writer may
          // have refreshed that.
          dropStaleCopy(cacheKey, committed);
        }
      } catch (RuntimeException notRefreshed) {
        dropCachedCopy(transaction, cacheKey, notRefreshed);
      }
    } catch (TardisOutcomeUnknownException unknown) {
      transaction.deleteAndRelease();
      throw unknown;
    } catch (RuntimeException failed) {
      transaction.release();
      throw failed;
    }
  }

  /**
   * Deletes the copy a write's commit did not refresh. A plain delete: it voids the leases of readers filling it
   * and of writers refreshing it, so none of them stores a value without this write either. If it fails, the old
   * copy stays until it is evicted, which is logged.
   */
  private void dropStaleCopy(String cacheKey, Outcome committed) {
    try {
      cache.delete(cacheKey);
    } catch (RuntimeException notDropped) {
      log.warn(
          "a write was applied but its commit ended {} and the old copy {} could not be deleted",
          committed,
          cacheKey,
          notDropped);
    }
  }

  /**
   * Deletes the cached copy a durable write could not refresh (its in-memory application failed, or the commit did),
   * so that no read finds the old value; if even that fails, the old value stays until its lease lapses and it is
   * evicted, which is logged.
   */
  private static void dropCachedCopy(
      Transaction transaction, String cacheKey, RuntimeException notRefreshed) {
    try {
      transaction.deleteAndRelease();
    } catch (RuntimeException notDropped) {
      notDropped.addSuppressed(notRefreshed);
      log.warn(
          "a write was applied but the cached copy {} could not be refreshed or dropped",
          cacheKey,
          notDropped);
    }
  }
}
