package io.dendrite.core;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.Transaction;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@link WritePolicy#WRITE_AROUND}: every cached entry the write touches is unregistered and quarantined under a
 * Q-invalidate lease (all in one round trip), the data store is written, and the entries are deleted and their
 * leases released together; the next get refills them.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
final class WriteAround<K extends Comparable<? super K>, R> implements WritePath<K, R> {
  private final CacheParts<K, R> common;
  private final IqClient cache;
  private final EntryIndex<K> index;
  private final CacheOutage outage;
  private final DendriteCounters metrics;

  WriteAround(CacheParts<K, R> common) {
    this.common = common;
    this.cache = common.cache;
    this.index = common.index;
    this.outage = common.outage;
    this.metrics = common.metrics;
  }

  @Override
  public <C> void write(
      Interval<K> interval,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate,
      RefreshedResults<R> refreshed,
      RoundTrips trips) {
    // Also the entries overlapping writes still hold under Q-inv: a process reading the cache
    // directly reads their
    // old values until deleted, so this write deletes them too before it returns.
    List<EntryIndex.Entry<K>> impacted = index.startInvalidating(interval);
    try {
      invalidate(impacted, interval, change, apply, trips);
    } finally {
      index.endInvalidating(impacted);
    }
  }

  private <C> void invalidate(
      List<EntryIndex.Entry<K>> impacted,
      Interval<K> interval,
      C change,
      ChangeApplier<? super C> apply,
      RoundTrips trips) {
    index.uncoverOverlapping(interval);
    try (Transaction transaction = cache.beginTransaction()) {
      boolean quarantined = false;
      // All in flight at once: one round trip however many entries the write touches.
      List<CompletableFuture<Outcome>> quarantines = new ArrayList<>();
      for (EntryIndex.Entry<K> entry : impacted) {
        index.remove(entry);
        trips.add(1);
        quarantines.add(transaction.quarantineOnce(entry.key()));
      }
      for (int i = 0; i < impacted.size(); i++) {
        try {
          CacheParts.await(quarantines.get(i));
          quarantined = true;
        } catch (IqConnectionException unreachable) {
          metrics.cacheUnavailable.increment();
          outage.owe(impacted.get(i).key());
        }
      }
      try {
        CacheParts.run(() -> apply.apply(change), "apply");
      } finally {
        // Also when the data store write failed: the entries are unregistered, so their values must
        // go.
        if (quarantined) {
          trips.add(transaction.servers().size());
          common.settleEnd(transaction.deleteAndRelease(), impacted);
        }
      }
      metrics.entriesInvalidated.add(impacted.size());
    }
  }
}
