package io.dendrite.core;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import java.util.List;
import java.util.Optional;

/**
 * The negative control: the same work as the other write paths without I/Q or interval leases (tests only), so that
 * the consistency checker can show what the leases prevent.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
final class UnleasedWrite<K extends Comparable<? super K>, R> implements WritePath<K, R> {
  private final CacheParts<K, R> common;
  private final IqClient cache;
  private final EntryIndex<K> index;
  private final ResultSetCodec<R> resultSets;
  private final WritePolicy policy;
  private final TypedWriteBuffer<K, ?> writeBuffer;

  UnleasedWrite(CacheParts<K, R> common, WritePolicy policy, TypedWriteBuffer<K, ?> writeBuffer) {
    this.common = common;
    this.cache = common.cache;
    this.index = common.index;
    this.resultSets = common.resultSets;
    this.policy = policy;
    this.writeBuffer = writeBuffer;
  }

  /** Write-back hands the change to the buffer; the other policies apply it to the data store now. */
  private <C> void persist(Interval<K> interval, C change, ChangeApplier<? super C> apply) {
    if (writeBuffer != null) {
      writeBuffer.buffer(interval, change);
    } else {
      CacheParts.run(() -> apply.apply(change), "apply");
    }
  }

  /** The negative control: the same work without I/Q or interval leases (tests only). */
  @Override
  public <C> void write(
      Interval<K> interval,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate,
      RefreshedResults<R> refreshed,
      RoundTrips trips) {
    persist(interval, change, apply);
    for (EntryIndex.Entry<K> entry : index.impactedBy(interval)) {
      trips.add(1);
      if (policy == WritePolicy.WRITE_AROUND) {
        index.remove(entry);
        cache.delete(entry.key());
        continue;
      }
      Optional<CacheValue> current = cache.get(entry.key());
      if (current.isPresent()) {
        trips.add(1);
        List<R> after =
            common.normalize(
                entry.interval(),
                common
                    .cacheUpdateOf(change, cacheUpdate)
                    .apply(entry.interval(), common.rowsOf(entry, current.get().data())));
        cache.set(entry.key(), resultSets.encode(after));
      }
    }
    index.uncoverOverlapping(interval);
  }
}
