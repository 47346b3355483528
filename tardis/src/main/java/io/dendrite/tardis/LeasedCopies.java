package io.dendrite.tardis;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.RefreshLease;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import io.dendrite.writeback.change.ChangeSequence;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cached copies on our IQ servers: a miss fills under the document's I lease, a write runs under its Q lease and
 * swaps the refreshed copy in; a write's Q lease voids the I leases of misses that overlapped it, so their fills are
 * not stored.
 */
final class LeasedCopies implements DocumentCopies {
  private static final Logger log = LoggerFactory.getLogger(LeasedCopies.class);

  private final IqClient cache;

  LeasedCopies(IqClient cache) {
    this.cache = cache;
  }

  @Override
  public Optional<Map<String, Object>> read(String cacheKey, Load load) {
    ReadResult result = cache.read(cacheKey);
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
      if (!(transaction.readForUpdate(cacheKey) instanceof RefreshResult.Granted granted)) {
        throw new IqException("another writer kept the lease on " + cacheKey);
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
        transaction.commit(keepMarker);
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
