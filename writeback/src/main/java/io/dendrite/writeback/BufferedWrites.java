package io.dendrite.writeback;

import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStoreException;
import io.dendrite.writeback.store.DataStoreUnavailableException;
import io.dendrite.writeback.store.Entity;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * Design 1's buffered writes: one per document, holding its pending changes compacted, pinned on R servers and
 * listed in a {@link PendingWritesPartition}. Everything that changes one, buffering a write, draining it to the
 * data store, or the write-through fallback, runs under the document's lock ({@link KeyLocks}), so they are
 * serialized per document.
 *
 * <p>Drains go in batches: the buffered writes of up to {@code drainBatch} documents are applied in one data-store
 * round (one transaction in SQL), then deleted with their deletes in flight together, then unlisted in one append
 * per partition; the documents' locks are held throughout.
 */
final class BufferedWrites {
  private final KeyLocks documentLocks;
  private final PinnedReplicas replicas;
  private final List<PendingWritesPartition> partitions;
  private final RetryingStore store;
  private final PinnedBudget budget;
  private final Clock clock;
  private final int drainBatch;
  private final LongAdder drained;
  private final LongAdder fallbacks;

  BufferedWrites(KeyLocks documentLocks, PinnedReplicas replicas, List<PendingWritesPartition> partitions,
      RetryingStore store, PinnedBudget budget, Clock clock, int drainBatch, LongAdder drained,
      LongAdder fallbacks) {
    this.documentLocks = documentLocks;
    this.replicas = replicas;
    this.partitions = partitions;
    this.store = store;
    this.budget = budget;
    this.clock = clock;
    this.drainBatch = drainBatch;
    this.drained = drained;
    this.fallbacks = fallbacks;
  }

  /**
   * Buffers {@code changes} behind the document's earlier ones, or, when pinned memory refuses them, applies the
   * earlier ones and then these to the data store. Returns once every replica stored it or the store applied it.
   */
  void write(EntityKey key, ChangeSequence changes) {
    String bufferedKey = BufferedWriteKey.of(key);
    try (KeyLocks.Held lock = documentLocks.acquire(bufferedKey)) {
      Optional<byte[]> existing = replicas.get(bufferedKey);
      Optional<ChangeSequence> buffered = existing.map(ChangeSequence::decode);
      // Compacting before anything is stored also surfaces a type conflict to this writer, not to a drain.
      byte[] next = buffered.orElse(ChangeSequence.empty()).then(changes).compact().encode();
      long growth = (long) (next.length - existing.map(value -> value.length).orElse(0)) * replicas.count();
      if (!budget.tryReserve(growth)) {
        writeThrough(key, lock, existing, changes);
        return;
      }
      Outcome stored;
      try {
        stored = register(bufferedKey, buffered.isEmpty(), lock, next);
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
      writeThrough(key, lock, existing, changes);
    }
  }

  /** Lists a new buffered write in its partition (first, see {@link PendingWritesPartition}), then pins it. */
  private Outcome register(String bufferedKey, boolean isNew, KeyLocks.Held lock, byte[] value) {
    if (isNew) {
      Outcome listed = partitionOf(bufferedKey).add(bufferedKey, clock.instant());
      if (!listed.isOk()) {
        return listed;
      }
    }
    lock.ensureHeld();
    return replicas.set(bufferedKey, value);
  }

  /**
   * Applies the buffered writes of {@code keys}, those that have one, to the data store and deletes them, a batch at
   * a time; also unlists every key from its partition.
   *
   * @throws ExclusiveLease.LeaseLostException when a cache lease was lost before a destructive step (the batch
   *     stopped there; what it applied is still buffered, in idempotent form, and is safe to apply again)
   */
  void drainAll(List<EntityKey> keys) {
    List<EntityKey> distinct = keys.stream().distinct().toList();
    for (int from = 0; from < distinct.size(); from += drainBatch) {
      List<EntityKey> batch = distinct.subList(from, Math.min(distinct.size(), from + drainBatch));
      List<String> bufferedKeys = batch.stream().map(BufferedWriteKey::of).toList();
      try (KeyLocks.Held locks = documentLocks.acquireAll(bufferedKeys)) {
        drainHeld(batch, locks, replicas.getAll(bufferedKeys));
      }
    }
  }

  /** Those of {@code keys} that have a buffered write right now (a lock-free look, one batch of reads). */
  Set<EntityKey> bufferedAmong(Collection<EntityKey> keys) {
    Map<String, EntityKey> byBufferedKey = keys.stream().distinct()
        .collect(Collectors.toMap(BufferedWriteKey::of, key -> key));
    return replicas.getAll(byBufferedKey.keySet()).keySet().stream().map(byBufferedKey::get)
        .collect(Collectors.toSet());
  }

  /**
   * The fallback: the earlier buffered changes go first, drained as a background thread would, then the new ones
   * are converted against the resulting state and applied; each step is idempotent when it reaches the store, so
   * a retry after an unknown outcome applies nothing twice.
   */
  private void writeThrough(EntityKey key, KeyLocks.Held lock, Optional<byte[]> buffered, ChangeSequence changes) {
    Map<String, byte[]> values = new HashMap<>();
    buffered.ifPresent(value -> values.put(BufferedWriteKey.of(key), value));
    drainHeld(List.of(key), lock, values);
    store.applyConverted(key, changes);
    fallbacks.increment();
  }

  /**
   * Algorithm 2 of the thesis, for a batch: each non-idempotent buffered write is converted against the document's
   * current state and the converted form replaces it on every replica <em>before</em> anything is applied, so that a
   * crash after the apply leaves buffered writes that can be applied again harmlessly. Then one apply for the batch,
   * delete, unlist. The replicas are deleted also for keys without a value, because a refused write may have left
   * its value on some. A document the store refuses stays buffered (the others drain) and its refusal is thrown
   * once the rest is done.
   */
  private void drainHeld(List<EntityKey> keys, KeyLocks.Held locks, Map<String, byte[]> values) {
    Map<EntityKey, ChangeSequence> toApply = new LinkedHashMap<>();
    Map<EntityKey, Integer> pinnedSizes = new HashMap<>();
    for (EntityKey key : keys) {
      String bufferedKey = BufferedWriteKey.of(key);
      byte[] value = values.get(bufferedKey);
      if (value == null) {
        continue;
      }
      ChangeSequence changes = ChangeSequence.decode(value);
      int pinnedSize = value.length;
      if (!changes.isIdempotent()) {
        changes = changes.toIdempotent(store.read(key).map(Entity::fields));
        byte[] converted = changes.encode();
        locks.ensureHeld();
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
      toApply.put(key, changes);
      pinnedSizes.put(key, pinnedSize);
    }
    DataStoreException refused = applyAll(toApply);
    List<String> done = new ArrayList<>();
    long freed = 0;
    int drainedNow = 0;
    for (EntityKey key : keys) {
      String bufferedKey = BufferedWriteKey.of(key);
      boolean wasRefused = pinnedSizes.containsKey(key) && !toApply.containsKey(key);
      // A lost cache lease leaves the buffered write to its new holder: what was applied of it was idempotent.
      if (wasRefused || !locks.stillHeld(bufferedKey)) {
        continue;
      }
      done.add(bufferedKey);
      freed += pinnedSizes.getOrDefault(key, 0);
      drainedNow += toApply.containsKey(key) ? 1 : 0;
    }
    replicas.deleteAll(done);
    budget.adjust(-freed * replicas.count());
    drained.add(drainedNow);
    done.stream().collect(Collectors.groupingBy(this::partitionOf, LinkedHashMap::new, Collectors.toList()))
        .forEach(PendingWritesPartition::removeAll);
    if (refused != null) {
      throw refused;
    }
  }

  /**
   * Applies the batch in one store round; when the store refuses it, applies the documents one by one so that one
   * refused document does not hold the others back. Refused documents leave {@code toApply} and the first refusal
   * is returned. An unavailable store is thrown (after the retries): nothing is known to be applied then.
   */
  private DataStoreException applyAll(Map<EntityKey, ChangeSequence> toApply) {
    if (toApply.isEmpty()) {
      return null;
    }
    List<EntityChanges> batch = new ArrayList<>();
    toApply.forEach((key, changes) -> {
      if (!changes.isEmpty()) { // changes that cancelled out (an $addToSet and its $pull) have nothing to send
        batch.add(new EntityChanges(key, changes));
      }
    });
    if (batch.isEmpty()) {
      return null;
    }
    try {
      store.apply(batch);
      return null;
    } catch (DataStoreUnavailableException unavailable) {
      throw unavailable;
    } catch (DataStoreException refused) {
      if (batch.size() == 1) {
        throw refused;
      }
    }
    DataStoreException first = null;
    for (EntityChanges one : batch) {
      try {
        store.apply(List.of(one));
      } catch (DataStoreUnavailableException unavailable) {
        throw unavailable;
      } catch (DataStoreException refused) {
        toApply.remove(one.key());
        first = first == null ? refused : first;
      }
    }
    return first;
  }

  private PendingWritesPartition partitionOf(String bufferedKey) {
    return partitions.get(PendingWritesPartition.indexOf(bufferedKey, partitions.size()));
  }
}
