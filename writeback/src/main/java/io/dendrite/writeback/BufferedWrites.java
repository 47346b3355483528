package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * Design 1's buffered writes: one per document, holding its pending changes compacted, pinned on R servers and
 * listed in a {@link PendingWritesPartition}. Everything that changes one, buffering a write, draining it to the
 * data store, or the write-through fallback, runs under the document's {@link ExclusiveLease}, so they are
 * serialized per document across threads and processes.
 */
final class BufferedWrites {
  private final IqClient cache;
  private final PinnedReplicas replicas;
  private final List<PendingWritesPartition> partitions;
  private final RetryingStore store;
  private final PinnedBudget budget;
  private final Clock clock;
  private final LongAdder drained;
  private final LongAdder fallbacks;

  BufferedWrites(IqClient cache, PinnedReplicas replicas, List<PendingWritesPartition> partitions,
      RetryingStore store, PinnedBudget budget, Clock clock, LongAdder drained, LongAdder fallbacks) {
    this.cache = cache;
    this.replicas = replicas;
    this.partitions = partitions;
    this.store = store;
    this.budget = budget;
    this.clock = clock;
    this.drained = drained;
    this.fallbacks = fallbacks;
  }

  /**
   * Buffers {@code changes} behind the document's earlier ones, or, when pinned memory refuses them, applies the
   * earlier ones and then these to the data store. Returns once every replica stored it or the store applied it.
   */
  void write(EntityKey key, ChangeSequence changes) {
    String bufferedKey = BufferedWriteKey.of(key);
    try (ExclusiveLease lease = ExclusiveLease.acquire(cache, bufferedKey)) {
      Optional<byte[]> existing = replicas.get(bufferedKey);
      Optional<ChangeSequence> buffered = existing.map(ChangeSequence::decode);
      // Compacting before anything is stored also surfaces a type conflict to this writer, not to a drain.
      byte[] next = buffered.orElse(ChangeSequence.empty()).then(changes).compact().encode();
      long growth = (long) (next.length - existing.map(value -> value.length).orElse(0)) * replicas.count();
      if (!budget.tryReserve(growth)) {
        writeThrough(key, lease, buffered, changes);
        return;
      }
      Outcome stored;
      try {
        stored = register(bufferedKey, buffered.isEmpty(), lease, next);
      } catch (RuntimeException failed) {
        budget.adjust(-growth);
        throw failed;
      }
      if (stored.isOk()) {
        return;
      }
      budget.adjust(-growth);
      if (stored != Outcome.PINNED_MEMORY_FULL) {
        throw new IqException("could not buffer the write of " + key + ": " + stored);
      }
      writeThrough(key, lease, buffered, changes);
    }
  }

  /** Lists a new buffered write in its partition (first, see {@link PendingWritesPartition}), then pins it. */
  private Outcome register(String bufferedKey, boolean isNew, ExclusiveLease lease, byte[] value) {
    if (isNew) {
      Outcome listed = partitionOf(bufferedKey).add(bufferedKey, clock.instant());
      if (!listed.isOk()) {
        return listed;
      }
    }
    lease.ensureHeld();
    return replicas.set(bufferedKey, value);
  }

  /** Applies the document's buffered write, if it has one, to the data store and deletes it. */
  void drain(EntityKey key) {
    String bufferedKey = BufferedWriteKey.of(key);
    try (ExclusiveLease lease = ExclusiveLease.acquire(cache, bufferedKey)) {
      drainLeased(key, lease, replicas.get(bufferedKey).map(ChangeSequence::decode));
    }
  }

  /** Whether the document has a buffered write right now (a lease-free look, for the read fast path). */
  boolean isBuffered(EntityKey key) {
    return replicas.get(BufferedWriteKey.of(key)).isPresent();
  }

  /**
   * The fallback: the earlier buffered changes go first, drained as a background thread would, then the new ones
   * are converted against the resulting state and applied; each step is idempotent when it reaches the store, so
   * a retry after an unknown outcome applies nothing twice.
   */
  private void writeThrough(EntityKey key, ExclusiveLease lease, Optional<ChangeSequence> buffered,
      ChangeSequence changes) {
    drainLeased(key, lease, buffered);
    store.applyConverted(key, changes);
    fallbacks.increment();
  }

  /**
   * Algorithm 2 of the thesis: a non-idempotent buffered write is converted against the document's current state
   * and the converted form replaces it on every replica <em>before</em> it is applied, so that a crash after the
   * apply leaves a buffered write that can be applied again harmlessly. Then apply, delete, unlist. The replicas
   * are deleted even when {@code buffered} is empty, because a refused write may have left its value on some.
   */
  private void drainLeased(EntityKey key, ExclusiveLease lease, Optional<ChangeSequence> buffered) {
    String bufferedKey = BufferedWriteKey.of(key);
    int pinnedSize = 0;
    if (buffered.isPresent()) {
      ChangeSequence changes = buffered.get();
      pinnedSize = changes.encode().length;
      if (!changes.isIdempotent()) {
        changes = changes.toIdempotent(store.read(key).map(Entity::fields));
        byte[] converted = changes.encode();
        lease.ensureHeld();
        Outcome persisted = replicas.set(bufferedKey, converted);
        if (!persisted.isOk()) {
          // Applying without the persisted form would risk a double apply after a crash, so this waits for pinned
          // memory instead (a converted $push holds the whole array and may not fit where the original did). Some
          // replicas may hold the converted form already; it is correct there too, so the next attempt is safe.
          throw new IqException("could not persist the idempotent form of " + key + ": " + persisted);
        }
        budget.adjust((long) (converted.length - pinnedSize) * replicas.count());
        pinnedSize = converted.length;
      }
      store.apply(key, changes);
    }
    lease.ensureHeld();
    replicas.delete(bufferedKey);
    budget.adjust(-(long) pinnedSize * replicas.count());
    if (buffered.isPresent()) {
      drained.increment();
    }
    partitionOf(bufferedKey).remove(bufferedKey);
  }

  private PendingWritesPartition partitionOf(String bufferedKey) {
    return partitions.get(PendingWritesPartition.indexOf(bufferedKey, partitions.size()));
  }
}
