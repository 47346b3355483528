package io.dendrite.writeback.kernel;

import io.dendrite.core.DataStoreException;
import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.iq.client.Flight;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.PartlyCommittedException;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.engine.BufferRefusedException;
import io.dendrite.writeback.engine.UndecodableValueException;
import io.dendrite.writeback.store.Entity;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * Design 1's buffered writes: one per document, holding its pending changes compacted, pinned on R servers and
 * listed in a {@link PendingWritesPartition}. Everything that changes one, buffering a write, draining it to the
 * data store, or the write-through fallback, runs under the document's lock ({@link BufferedWriteLocks}), whose
 * commit the cache servers fence, so they are serialized per document.
 *
 * <p>Drains go in batches: the buffered writes of up to {@code drainBatch} documents are applied in one data-store
 * round (one transaction in SQL), then deleted in one commit, then their listings removed; the documents' locks are
 * held from the read of the buffered writes to the commit of their deletion.
 */
public final class BufferedWrites {
  /** The drains that left documents buffered because their idempotent form did not fit: the first few. */
  private final FirstWarnings refusedForms =
      new FirstWarnings(org.slf4j.LoggerFactory.getLogger(BufferedWrites.class), 20);

  /** Past this many documents {@link #listedHere} starts over (a bound on its memory; see there). */
  private static final int LISTED_HERE_LIMIT = 1 << 20;

  private final BufferedWriteLocks documentLocks;
  private final PinnedReplicas replicas;
  private final List<PendingWritesPartition> partitions;
  private final RetryingStore store;
  private final PinnedBudget budget;
  private final UndecodableValues undecodableValues;
  private final Clock clock;
  private final int drainBatch;

  /**
   * The largest batch a drain sends in one store round now: halved when a round timed out at the retry deadline (a
   * database too slow or too loaded for the batch, or not answering at all), grown back by a quarter with every round
   * that went through, up to {@code drainBatch}.
   */
  private final AtomicInteger batchLimit;

  private final LongAdder drained;
  private final LongAdder fallbacks;
  private final String keyPrefix;
  private final WhenFull whenFull;

  /** What a write does when pinned memory (the budget, or a server's quota) refuses to buffer it. */
  public enum WhenFull {
    /** Write-back: apply the earlier buffered changes, then this write, to the data store. */
    WRITE_THROUGH,
    /**
     * TARDIS: the data store is why the write is buffered at all, so it fails with {@link BufferRefusedException}
     * and nothing changes.
     */
    REFUSE
  }

  /**
   * With in-process locks only: documents whose buffered write this process listed and no drain deleted since, so
   * a write to them needs no new listing ({@link StartedWrite}). Anything not here is listed again on its next write
   * (a duplicate listing is harmless), so forgetting entries, or the whole set, is always safe.
   */
  private final Set<String> listedHere = ConcurrentHashMap.newKeySet();

  public BufferedWrites(
      BufferedWriteLocks documentLocks,
      PinnedReplicas replicas,
      List<PendingWritesPartition> partitions,
      RetryingStore store,
      PinnedBudget budget,
      UndecodableValues undecodableValues,
      Clock clock,
      int drainBatch,
      LongAdder drained,
      LongAdder fallbacks,
      String keyPrefix,
      WhenFull whenFull) {
    this.documentLocks = documentLocks;
    this.replicas = replicas;
    this.partitions = partitions;
    this.store = store;
    this.budget = budget;
    this.undecodableValues = undecodableValues;
    this.clock = clock;
    this.drainBatch = drainBatch;
    this.batchLimit = new AtomicInteger(drainBatch);
    this.drained = drained;
    this.fallbacks = fallbacks;
    this.keyPrefix = keyPrefix;
    this.whenFull = whenFull;
  }

  /** The cache key of the document's buffered write ({@link BufferedWriteKey}, under this instance's prefix). */
  public String keyOf(EntityKey key) {
    return BufferedWriteKey.of(keyPrefix, key);
  }

  /**
   * Buffers {@code changes} behind the document's earlier ones, or, when pinned memory refuses them, applies the
   * earlier ones and then these to the data store. Returns once every replica stored it or the store applied it.
   *
   * @throws LeaseLostException when the lock was lost before anything changed (retry)
   * @throws UndecodableValueException when the document's buffered write cannot be decoded; nothing changed (a
   *     drain moves it aside)
   */
  public void write(EntityKey key, ChangeSequence changes) {
    String bufferedKey = keyOf(key);
    BufferedWriteLocks.Locked locked;
    try {
      locked = documentLocks.lock(List.of(bufferedKey));
    } catch (ServerMemoryFullException noRoomForTheLock) {
      writeThrough(key, changes, BufferRefusedException.Limit.SERVER_MEMORY);
      return;
    }
    BufferRefusedException.Limit refusedBy;
    try (BufferedWriteLocks.Locked lock = locked) {
      Optional<byte[]> existing = Optional.ofNullable(lock.values().get(bufferedKey));
      Optional<ChangeSequence> buffered =
          existing.map(
              value -> UndecodableValues.decode(bufferedKey, value, ChangeSequence::decode));
      // Compacting before anything is stored also surfaces a type conflict to this writer, not to a
      // drain.
      byte[] next = buffered.orElse(ChangeSequence.empty()).then(changes).compact().encode();
      long growth =
          (long) (next.length - existing.map(value -> value.length).orElse(0)) * replicas.count();
      if (!budget.tryReserve(growth)) {
        lock.close();
        writeThrough(key, changes, BufferRefusedException.Limit.PINNED_BUDGET);
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
      refusedBy =
          limitOfServer(stored)
              .orElseThrow(
                  () -> new IqException("could not buffer the write of " + key + ": " + stored));
    }
    writeThrough(key, changes, refusedBy);
  }

  /**
   * Starts {@link #write} for several documents at once, each step's requests sent together so that a caller can
   * send its own requests alongside: this locks the documents and sends the reads of their buffered writes; {@link
   * StartedWrite#store} sends the new buffered writes and their listings; {@link StartedWrite#await} waits for them.
   * Only with in-process locks (no other process writes these documents); with others, {@code store} writes each
   * document as {@link #write} does.
   *
   * <p>The listing and the buffered write are in flight together, not listing first: unless both are confirmed, the
   * buffered write is put back as it was read before the lock is released. Only a process that dies between the
   * replies can leave a new buffered write unlisted, and it holds nothing acknowledged: the next write to the document
   * lists it again (a listing is sent unless this process listed the document since its last drain of it, {@link
   * #listedHere}, so a process that just started lists every document it writes), and a range write-back log record
   * sent before it names the document.
   */
  public StartedWrite startWrite(Map<EntityKey, ChangeSequence> changes) {
    List<String> bufferedKeys = changes.keySet().stream().map(this::keyOf).toList();
    return new StartedWrite(
        changes, documentLocks.inProcessOnly() ? documentLocks.lockAsync(bufferedKeys) : null);
  }

  /** A write of several documents in steps; see {@link #startWrite}. */
  public final class StartedWrite {
    private final Map<EntityKey, ChangeSequence> changes;
    private final PinnedReplicas.Sent<BufferedWriteLocks.Locked> locking;
    private BufferedWriteLocks.Locked lock;
    private final Map<String, PinnedReplicas.Sent<Outcome>> listings = new LinkedHashMap<>();
    private final Map<String, PinnedReplicas.Sent<Outcome>> stores = new LinkedHashMap<>();

    /** The new value of each document whose store was sent. */
    private final Map<String, byte[]> sentValues = new HashMap<>();

    private final List<EntityKey> writeThrough = new ArrayList<>();
    private long reserved;

    private StartedWrite(
        Map<EntityKey, ChangeSequence> changes,
        PinnedReplicas.Sent<BufferedWriteLocks.Locked> locking) {
      this.changes = changes;
      this.locking = locking;
    }

    /**
     * Sends each document's new buffered write (its earlier changes, then these, compacted), and a listing for each
     * that has none this process knows of. A document whose growth the pinned budget refuses goes through instead,
     * in {@link #await}.
     *
     * @throws IllegalArgumentException when the changes conflict with the buffered ones; nothing is buffered then
     * @throws UndecodableValueException when a document's buffered write cannot be decoded; nothing is buffered
     */
    public void store() {
      if (locking == null) {
        changes.forEach((key, more) -> LeaseLostException.untilKept(() -> write(key, more)));
        return;
      }
      lock = locking.await();
      try {
        Map<String, byte[]> next = new LinkedHashMap<>();
        changes.forEach(
            (key, more) -> {
              String bufferedKey = keyOf(key);
              byte[] existing = lock.values().get(bufferedKey);
              Optional<ChangeSequence> buffered =
                  Optional.ofNullable(existing)
                      .map(
                          value ->
                              UndecodableValues.decode(bufferedKey, value, ChangeSequence::decode));
              next.put(
                  bufferedKey,
                  buffered.orElse(ChangeSequence.empty()).then(more).compact().encode());
            });
        changes.forEach(
            (key, more) -> {
              String bufferedKey = keyOf(key);
              byte[] existing = lock.values().get(bufferedKey);
              byte[] value = next.get(bufferedKey);
              long growth =
                  (long) (value.length - (existing == null ? 0 : existing.length))
                      * replicas.count();
              if (!budget.tryReserve(growth)) {
                writeThrough.add(key);
                return;
              }
              reserved += growth;
              if (existing == null || !listedHere.contains(bufferedKey)) {
                listings.put(
                    bufferedKey, partitionOf(bufferedKey).addAsync(bufferedKey, clock.instant()));
              }
              lock.changing(bufferedKey);
              stores.put(bufferedKey, replicas.setAsync(bufferedKey, value));
              sentValues.put(bufferedKey, value);
            });
      } catch (RuntimeException failed) {
        try {
          concat(listings.values(), stores.values())
              .forEach(
                  sent -> {
                    try {
                      sent.await();
                    } catch (RuntimeException ignored) {
                      // put back below in any case
                    }
                  });
          putBack();
        } finally {
          release();
        }
        throw failed;
      }
    }

    /**
     * Waits for what {@link #store} sent. When a listing or a store was refused, every buffered write this changed is
     * put back as it was read (a new one deleted) and, if pinned memory refused, the documents go through to the data
     * store instead (as {@link #write}'s fallback); otherwise the write fails with nothing changed.
     *
     * @throws IqException when something was refused other than for pinned memory, or could not be put back
     */
    public void await() {
      if (locking == null) {
        return;
      }
      List<EntityKey> fallBack = new ArrayList<>(writeThrough);
      BufferRefusedException.Limit serverLimit = null;
      try {
        Outcome worst = Outcome.OK;
        RuntimeException failure = null;
        for (PinnedReplicas.Sent<Outcome> sent : concat(listings.values(), stores.values())) {
          try {
            worst = worst.worst(sent.await());
          } catch (RuntimeException failed) {
            failure = failure == null ? failed : failure;
          }
        }
        if (failure == null && worst.isOk()) {
          // Every stored document is listed now: by the listing just confirmed, or by one this
          // process made before (a drain forgets it here before it deletes the buffered write).
          stores.keySet().forEach(listedHere::add);
          sentValues.forEach(lock::changeConfirmed);
          if (listedHere.size() > LISTED_HERE_LIMIT) {
            listedHere.clear();
          }
          return;
        }
        putBack();
        if (failure != null) {
          throw failure;
        }
        Outcome refusal = worst;
        serverLimit =
            limitOfServer(refusal)
                .orElseThrow(
                    () ->
                        new IqException(
                            "could not buffer the write of " + changes.keySet() + ": " + refusal));
        changes.keySet().stream()
            .filter(key -> stores.containsKey(keyOf(key)))
            .forEach(fallBack::add);
      } finally {
        release();
      }
      BufferRefusedException.Limit limitOfServer = serverLimit;
      fallBack.forEach(
          key ->
              BufferedWrites.this.writeThrough(
                  key,
                  changes.get(key),
                  writeThrough.contains(key)
                      ? BufferRefusedException.Limit.PINNED_BUDGET
                      : limitOfServer));
    }

    /** Gives up before {@link #store}: nothing was written. */
    public void abandon() {
      if (locking != null && lock == null) {
        lock = locking.await();
      }
      release();
    }

    /** Puts back what was read under the lock for every document whose store was sent. */
    private void putBack() {
      for (String bufferedKey : stores.keySet()) {
        byte[] before = lock.values().get(bufferedKey);
        if (before == null) {
          replicas.delete(bufferedKey);
        } else {
          replicas.set(bufferedKey, before);
        }
      }
      budget.adjust(-reserved);
      reserved = 0;
    }

    private void release() {
      if (lock != null) {
        lock.close();
      }
    }
  }

  private static <T> List<T> concat(Collection<T> first, Collection<T> second) {
    List<T> all = new ArrayList<>(first);
    all.addAll(second);
    return all;
  }

  /** Lists a new buffered write in its partition (first, see {@link PendingWritesPartition}), then pins it. */
  private Outcome register(
      String bufferedKey, boolean isNew, BufferedWriteLocks.Locked lock, byte[] value) {
    if (isNew) {
      Outcome listed = partitionOf(bufferedKey).add(bufferedKey, clock.instant());
      if (!listed.isOk()) {
        return listed;
      }
    }
    lock.stage(bufferedKey, value);
    return lock.commit();
  }

  /**
   * Writes every partition's listings and every listed buffered write again to each replica that lacks it: what the
   * repair thread does once a cache server is back.
   *
   * @return how many copies were restored
   */
  public int restoreListedReplicas() {
    int restored =
        replicas.restoreLines(partitions.stream().map(PendingWritesPartition::key).toList());
    List<EntityKey> listed =
        PendingWritesPartition.entries(replicas, partitions).stream()
            .map(PendingWritesPartition.Entry::key)
            .toList();
    return restored + restoreReplicas(listed);
  }

  /**
   * Writes the buffered writes of {@code keys} that lack a copy on some live replica server unchanged to every
   * replica again, a batch at a time under their locks: gives back the copies a restarted server lost, so that they
   * survive the next loss. One batched read finds them; the others are left alone.
   *
   * @return how many buffered writes were written again (0 once every live replica holds its copy)
   * @throws IqException when pinned memory refused a batch or a replica's outcome is unknown (nothing is lost: the
   *     surviving copies are untouched; restore again later)
   * @throws LeaseLostException when a lock was lost before anything changed
   */
  public int restoreReplicas(Collection<EntityKey> keys) {
    List<String> bufferedKeys =
        replicas.lackingACopy(keys.stream().map(this::keyOf).distinct().toList());
    int restored = 0;
    for (int from = 0; from < bufferedKeys.size(); from += drainBatch) {
      try (BufferedWriteLocks.Locked lock =
          documentLocks.lock(
              bufferedKeys.subList(from, Math.min(bufferedKeys.size(), from + drainBatch)))) {
        Map<String, byte[]> values = lock.values();
        if (values.isEmpty()) {
          continue;
        }
        values.forEach(lock::stage);
        Outcome outcome = lock.commit();
        if (!outcome.isOk()) {
          throw new IqException(
              "could not restore the replicas of " + values.keySet() + ": " + outcome);
        }
        restored += values.size();
      }
    }
    return restored;
  }

  /**
   * Applies the buffered writes of {@code keys}, those that have one, to the data store and deletes them, a batch at
   * a time; also removes their listings. A batch is at most {@code drainBatch} documents, fewer while the database
   * is timing out (see {@link #batchLimit}). A buffered write that cannot be decoded is moved aside ({@link
   * UndecodableValues}) and deleted with the applied ones.
   *
   * @throws LeaseLostException when a lock was lost before a destructive step (the batch stopped
   *     there; what it applied is still buffered, in idempotent form, and is safe to apply again)
   * @throws DataStoreUnavailableException when the store stayed down or silent past the retry deadline: the pass
   *     stops there, so that the documents' writers get their locks before anything is tried again
   */
  public void drainAll(List<EntityKey> keys) {
    drainAll(keys, true);
  }

  /**
   * {@link #drainAll}, for a read that must see every buffered write of {@code keys} applied before it queries.
   *
   * @throws UndecodableValueException when one cannot be decoded: the read cannot apply it, so must not go on as if
   *     it were applied (the batch it was in stays buffered; a drain moves the value aside)
   */
  public void drainForRead(List<EntityKey> keys) {
    drainAll(keys, false);
  }

  private void drainAll(List<EntityKey> keys, boolean moveAside) {
    List<EntityKey> distinct = keys.stream().distinct().toList();
    IdempotentFormRefusedException stayed = null;
    int from = 0;
    while (from < distinct.size()) {
      int size = Math.min(batchLimit.get(), distinct.size() - from);
      try {
        drainSplittingWhenLocksLapse(distinct.subList(from, from + size), moveAside);
      } catch (DataStoreUnavailableException unavailable) {
        if (RetryingStore.timedOut(unavailable)) {
          batchLimit.updateAndGet(limit -> Math.max(1, Math.min(limit, size / 2)));
        }
        throw unavailable;
      } catch (IdempotentFormRefusedException refused) {
        // The documents whose form the cache refused stay buffered; the rest of the pass goes on,
        // or one document too large to convert would hold every other back for good.
        if (!moveAside) {
          throw refused;
        }
        refusedForms.warn("{}", refused.getMessage());
        stayed = stayed == null ? refused : stayed;
      }
      batchLimit.updateAndGet(limit -> Math.min(drainBatch, limit + limit / 4 + 1));
      from += size;
    }
    if (stayed != null) {
      throw stayed;
    }
  }

  /**
   * Drains one batch; when its locks lapsed before its buffered writes could be deleted (its store round outlasted
   * the servers' lease lifetime: a slow or overloaded database), drains it again in halves, each split further if it
   * loses its locks too. Taking the whole batch again would apply it again, harmlessly but just as slowly, and lose
   * its locks again: the drain would never finish while the database stays that slow. The lapsed locks were free to
   * writers meanwhile.
   *
   * <p>A store round that timed out at the retry deadline is not split here: smaller batches under fresh locks, one
   * right after the other, would hold the first documents' locks round after round (a writer of one of them waited
   * out its lock timeout behind seven rounds on a black-holed FerretDB). The pass stops instead, and {@link
   * #drainAll} sends smaller batches from then on.
   */
  private void drainSplittingWhenLocksLapse(List<EntityKey> batch, boolean moveAside) {
    try {
      drainBatch(batch, null, moveAside);
    } catch (LeaseLostException lapsed) {
      if (batch.size() == 1) {
        throw lapsed;
      }
      drainHalves(batch, moveAside);
    } catch (IdempotentFormRefusedException refused) {
      // Nothing of the batch was applied: its halves drain apart, down to the documents whose form
      // does not fit.
      if (batch.size() == 1) {
        throw refused;
      }
      drainHalves(batch, moveAside);
    }
  }

  /** Drains both halves of {@code batch}; a refused form in the first does not keep the second from draining. */
  private void drainHalves(List<EntityKey> batch, boolean moveAside) {
    int half = batch.size() / 2;
    IdempotentFormRefusedException first = null;
    try {
      drainSplittingWhenLocksLapse(batch.subList(0, half), moveAside);
    } catch (IdempotentFormRefusedException refused) {
      first = refused;
    }
    try {
      drainSplittingWhenLocksLapse(batch.subList(half, batch.size()), moveAside);
    } catch (IdempotentFormRefusedException second) {
      if (first == null) {
        throw second;
      }
      first.addSuppressed(second);
    }
    if (first != null) {
      throw first;
    }
  }

  /** Those of {@code keys} that have a buffered write right now (a lock-free look, one batch of reads). */
  public Set<EntityKey> bufferedAmong(Collection<EntityKey> keys) {
    Map<String, EntityKey> byBufferedKey =
        keys.stream().distinct().collect(Collectors.toMap(this::keyOf, key -> key));
    return replicas.getAll(byBufferedKey.keySet()).keySet().stream()
        .map(byBufferedKey::get)
        .collect(Collectors.toSet());
  }

  /** The limit behind a server's refusal to store: {@link Outcome#PINNED_MEMORY_FULL} or {@link Outcome#MEMORY_FULL}. */
  private static Optional<BufferRefusedException.Limit> limitOfServer(Outcome refusal) {
    return switch (refusal) {
      case PINNED_MEMORY_FULL -> Optional.of(BufferRefusedException.Limit.SERVER_PINNED_MEMORY);
      case MEMORY_FULL -> Optional.of(BufferRefusedException.Limit.SERVER_MEMORY);
      default -> Optional.empty();
    };
  }

  /**
   * The fallback: the earlier buffered changes go first, drained as a background thread would, then the new ones
   * are converted against the resulting state and applied, all under the document's lock, so that no drain of a
   * newer buffered write converts against the same state meanwhile.
   *
   * @throws IqException when the buffered write could not be deleted afterwards: the new changes were applied, the
   *     write is not acknowledged
   */
  private void writeThrough(
      EntityKey key, ChangeSequence changes, BufferRefusedException.Limit refusedBy) {
    if (whenFull == WhenFull.REFUSE) {
      throw new BufferRefusedException(key, refusedBy);
    }
    drainBatch(List.of(key), () -> store.applyConverted(key, changes), true);
    fallbacks.increment();
  }

  /**
   * Algorithm 2 of the thesis, for a batch: each non-idempotent buffered write is converted against the document's
   * current state and the converted form replaces it on every replica <em>before</em> anything is applied, so that a
   * crash after the apply leaves buffered writes that can be applied again harmlessly; that commit ends the holding,
   * so the batch is locked and read again. Then one apply for the batch, {@code alsoApply} (the fallback's own
   * changes), the deletion of the applied buffered writes in one commit, and the removal of the listings read while
   * locked, which all announce buffered writes this commit deleted. A document the store refuses keeps its buffered
   * write (the others drain) and its refusal is thrown once the rest is done.
   *
   * <p>With {@code moveAside}, a buffered write that cannot be decoded is copied aside before anything is applied
   * and deleted with the applied ones (one that cannot be copied stays, as a refused one does); without it, it
   * fails the batch before anything is applied.
   */
  private void drainBatch(List<EntityKey> keys, Runnable alsoApply, boolean moveAside) {
    List<String> bufferedKeys = keys.stream().map(this::keyOf).toList();
    while (true) {
      try (BufferedWriteLocks.Locked locks = documentLocks.lock(bufferedKeys)) {
        Map<String, byte[]> values = locks.values();
        // Decoded once per holding: the conversion below and the apply read the same sequences.
        Map<EntityKey, ChangeSequence> toApply = new LinkedHashMap<>();
        Map<EntityKey, UndecodableValueException> undecodable = new LinkedHashMap<>();
        Map<EntityKey, Integer> pinnedSizes = new HashMap<>();
        for (EntityKey key : keys) {
          String bufferedKey = keyOf(key);
          byte[] value = values.get(bufferedKey);
          if (value == null) {
            continue;
          }
          pinnedSizes.put(key, value.length);
          try {
            toApply.put(key, UndecodableValues.decode(bufferedKey, value, ChangeSequence::decode));
          } catch (UndecodableValueException cannotApply) {
            if (!moveAside) {
              throw cannotApply;
            }
            undecodable.put(key, cannotApply);
          }
        }
        if (persistIdempotentForms(toApply, pinnedSizes, locks)) {
          continue;
        }
        Map<EntityKey, UndecodableValues.Copy> movedAside = new HashMap<>();
        RuntimeException notMoved = null;
        for (Map.Entry<EntityKey, UndecodableValueException> entry : undecodable.entrySet()) {
          try {
            byte[] value = values.get(keyOf(entry.getKey()));
            movedAside.put(entry.getKey(), undecodableValues.copyAside(entry.getValue(), value));
          } catch (RuntimeException failed) {
            notMoved = notMoved == null ? failed : notMoved;
          }
        }
        Map<PendingWritesPartition, PendingWritesPartition.Found> listings =
            PendingWritesPartition.listingsOf(replicas, partitions, bufferedKeys);
        Set<String> unconfirmed = listedWithoutACopyFound(keys, pinnedSizes, listings);
        DataStoreException refused = applyAll(toApply);
        if (alsoApply != null) {
          alsoApply.run();
        }
        Set<String> kept = new HashSet<>(unconfirmed);
        long freed = 0;
        for (EntityKey key : keys) {
          String bufferedKey = keyOf(key);
          if (unconfirmed.contains(bufferedKey)) {
            continue; // no copy read, but none proven absent either: stays listed
          }
          if (pinnedSizes.containsKey(key)
              && !toApply.containsKey(key)
              && !movedAside.containsKey(key)) {
            // refused by the store, or undecodable and not copied: stays buffered, and listed
            kept.add(bufferedKey);
            continue;
          }
          locks.stage(bufferedKey, null);
          freed += pinnedSizes.getOrDefault(key, 0);
        }
        // Forgotten while still locked: a writer that still found them here after the delete would
        // not list the buffered write it starts, and nothing would drain it.
        keys.forEach(key -> listedHere.remove(keyOf(key)));
        Outcome deleted;
        try {
          deleted = locks.commit();
        } catch (LeaseLostException lost) {
          if (alsoApply != null) {
            throw new IqException(
                "the write-through of " + keys + " was applied but its lock was lost", lost);
          }
          throw lost;
        }
        if (!deleted.isOk()) {
          throw new IqException(
              "could not delete the drained buffered writes of " + keys + ": " + deleted);
        }
        budget.adjust(-freed * replicas.count());
        drained.add(toApply.size());
        movedAside.values().forEach(undecodableValues::originalRemoved);
        // Every partition's removal in one flight, then the waits: one round trip however many
        // partitions.
        List<Runnable> removals = new ArrayList<>();
        try (Flight flight = replicas.flight()) {
          listings.forEach(
              (partition, found) ->
                  removals.add(
                      partition.removeAsync(
                          found.listings().stream()
                              .filter(listing -> !kept.contains(listing.bufferedKey()))
                              .toList(),
                          found.read())));
        }
        removals.forEach(Runnable::run);
        if (refused != null) {
          if (notMoved != null) {
            refused.addSuppressed(notMoved);
          }
          throw refused;
        }
        if (notMoved != null) {
          throw notMoved;
        }
        if (!unconfirmed.isEmpty()) {
          throw new IqException(
              "no server answered for the buffered writes of "
                  + unconfirmed
                  + " (their replica servers are unreachable): they stay listed for a later drain");
        }
        return;
      }
    }
  }

  /**
   * The buffered-write keys among {@code keys} that are listed but whose buffered write was not found, and whose
   * absence is not proven ({@link PinnedReplicas#provablyAbsent}): none of their replica servers answered (all cut
   * off at once, say), so the copies may all be there. Taking such a listing for drained would lose the write. A
   * listing without a buffered write is otherwise normal (a duplicate listing, a write put back), and one read per
   * replica of those few keys proves it.
   */
  private Set<String> listedWithoutACopyFound(
      List<EntityKey> keys,
      Map<EntityKey, Integer> found,
      Map<PendingWritesPartition, PendingWritesPartition.Found> listings) {
    Set<String> listed = new HashSet<>();
    listings
        .values()
        .forEach(
            partition ->
                partition.listings().forEach(listing -> listed.add(listing.bufferedKey())));
    List<String> notFound =
        keys.stream()
            .filter(key -> !found.containsKey(key))
            .map(this::keyOf)
            .filter(listed::contains)
            .toList();
    if (notFound.isEmpty()) {
      return Set.of();
    }
    Set<String> unconfirmed = new HashSet<>(notFound);
    unconfirmed.removeAll(replicas.provablyAbsent(notFound));
    return unconfirmed;
  }

  /**
   * Converts the non-idempotent buffered writes among {@code buffered} (decoded from values of {@code pinnedSizes}
   * bytes) against the documents' current state and commits the converted forms; returns whether there were any
   * (the holding then ended).
   */
  private boolean persistIdempotentForms(
      Map<EntityKey, ChangeSequence> buffered,
      Map<EntityKey, Integer> pinnedSizes,
      BufferedWriteLocks.Locked locks) {
    long growth = 0;
    boolean converted = false;
    for (Map.Entry<EntityKey, ChangeSequence> entry : buffered.entrySet()) {
      EntityKey key = entry.getKey();
      ChangeSequence changes = entry.getValue();
      if (!changes.isIdempotent()) {
        byte[] idempotent = changes.toIdempotent(store.read(key).map(Entity::fields)).encode();
        locks.stage(keyOf(key), idempotent);
        growth += idempotent.length - pinnedSizes.get(key);
        converted = true;
      }
    }
    if (!converted) {
      return false;
    }
    Outcome persisted;
    try {
      persisted = locks.commit();
    } catch (PartlyCommittedException partly) {
      // Some replicas took the idempotent forms before the others' locks lapsed. Nothing is applied
      // yet, and a buffered write's idempotent form applies as its original would, so the batch
      // starts over under fresh locks whichever form it finds (a busy machine's recovery drain
      // failed here instead).
      throw new LeaseLostException(buffered.keySet() + " on " + partly.lapsed());
    } catch (IqConnectionException | LeaseLostException notAboutTheForms) {
      throw notAboutTheForms;
    } catch (IqException refused) {
      // A server refused to stage a form (one larger than its item limit), or answered the commit
      // in a way that leaves it unknown on which replicas the forms are: nothing is applied to the
      // store yet, and either form applies the same, so the documents stay buffered and the drain
      // goes on without them.
      throw new IdempotentFormRefusedException(buffered.keySet(), refused.getMessage());
    }
    if (!persisted.isOk()) {
      // Applying without the persisted form would risk a double apply after a crash, so this waits
      // for pinned memory instead (a converted $push holds the whole array and may not fit where
      // the original did).
      throw new IdempotentFormRefusedException(buffered.keySet(), persisted.toString());
    }
    budget.adjust(growth * replicas.count());
    return true;
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
    toApply.forEach(
        (key, changes) -> {
          if (!changes
              .isEmpty()) { // changes that cancelled out (an $addToSet and its $pull) have nothing
            // to send
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
