package io.dendrite.tardis;

import io.dendrite.core.OwnedRange;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.kernel.BufferedWrites;
import io.dendrite.writeback.kernel.DocumentEngine;
import io.dendrite.writeback.kernel.LeaseLostException;
import io.dendrite.writeback.kernel.PendingWritesPartition;
import io.dendrite.writeback.kernel.PinnedBudget;
import io.dendrite.writeback.kernel.PinnedReplicas;
import io.dendrite.writeback.kernel.ReplicaRepair;
import io.dendrite.writeback.kernel.RetryingStore;
import io.dendrite.writeback.kernel.UndecodableValues;
import io.dendrite.writeback.store.DataStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;

/**
 * The writes this deployment buffered because the data store failed them (the thesis' Δᵢ), kept with write-back's
 * machinery: one buffered write per document under {@code TW:<collection>:<id>}, its changes compacted, pinned on R
 * servers and changed only under the Q leases of its replicas (so processes exclude each other and the servers fence
 * a holder whose lease lapsed; on stock memcached, under lock keys and by {@code cas}, see {@link CacheTier}), listed in ω partitions {@code PendingWrites:tardis:<i>} (the thesis' TeleW). An
 * apply converts a non-idempotent buffered write against the document's current state and pins that form first, so
 * that a process dying mid-apply leaves something any other can apply again harmlessly (Algorithm 7,
 * SnapshotRecovery).
 */
final class TeleportedWrites {
  private final IqClient cache;
  private final int replicaCount;
  private final PinnedReplicas replicas;
  private final List<PendingWritesPartition> partitions;
  private final BufferedWrites buffered;
  private final PinnedBudget budget;
  final LongAdder applied = new LongAdder();

  /** The partitions the last read of them all found listing something, less those found empty since. */
  private final AtomicReference<List<Integer>> listingPartitions = new AtomicReference<>(List.of());

  final LongAdder storeRetries = new LongAdder();

  TeleportedWrites(
      IqClient cache,
      CacheTier tier,
      DataStore store,
      String listings,
      int replicaCount,
      int partitionCount,
      long pinnedBudgetBytes,
      Duration lockTimeout,
      Duration storeRetryDeadline,
      int applyBatch) {
    this.cache = cache;
    this.replicaCount = replicaCount;
    this.replicas = tier.replicas(replicaCount);
    // ω recorded in the cache tier, or another ω refused: see PendingWritesPartition.claimCount.
    PendingWritesPartition.claimCount(replicas, listings + ":", partitionCount, "TARDIS's");
    this.partitions =
        IntStream.range(0, partitionCount)
            .mapToObj(index -> new PendingWritesPartition(replicas, listings + ":" + index))
            .toList();
    this.budget = new PinnedBudget(pinnedBudgetBytes);
    this.buffered =
        new BufferedWrites(
            tier.locks(replicas, lockTimeout),
            replicas,
            partitions,
            new RetryingStore(store, storeRetryDeadline, storeRetries),
            budget,
            new UndecodableValues(replicas, new LongAdder()),
            Clock.systemUTC(),
            // A recovery worker's α documents in one store round and one lock holding: one document
            // per round (as the thesis' workers apply them) cost a lock, a transaction and a delete
            // each, and recovered 1,300-1,900 documents/s here. A lazy apply is one document.
            applyBatch,
            applied,
            new LongAdder(),
            BufferedWriteKey.TELEPORTED,
            BufferedWrites.WhenFull.REFUSE);
  }

  /**
   * Buffers {@code changes} behind the document's earlier buffered changes, pinned on every replica and listed.
   *
   * @throws io.dendrite.writeback.engine.BufferRefusedException when pinned memory refused; nothing changed
   */
  void buffer(EntityKey key, ChangeSequence changes) {
    LeaseLostException.untilKept(() -> buffered.write(key, changes));
  }

  /** Whether the document has a buffered write now (a lock-free look at its replicas). */
  boolean has(EntityKey key) {
    return !buffered.bufferedAmong(List.of(key)).isEmpty();
  }

  /**
   * Applies the document's buffered write, if it has one, to the data store and deletes it (lazy recovery).
   *
   * @return whether the document had one (applied now, or by another holder while this waited for its lock)
   * @throws io.dendrite.core.DataStoreUnavailableException when the data store failed the apply: the buffered
   *     write stays
   */
  boolean apply(EntityKey key) {
    if (!has(key)) {
      return false;
    }
    LeaseLostException.untilKept(() -> buffered.drainForRead(List.of(key)));
    return true;
  }

  /**
   * One iteration of an active recovery worker (Algorithm 6): reads a random partition (the next ones while it is
   * empty) and applies the buffered writes of up to {@code alpha} of the documents it lists, picked at random, in
   * one store round (at most the batch this was built with).
   *
   * @return how many documents it found to apply; -1 when no partition lists anything
   * @throws io.dendrite.core.DataStoreUnavailableException when the data store failed an apply
   */
  int recoverSome(int alpha) {
    List<PendingWritesPartition.Entry> listed = somePartitionsListings();
    if (listed.isEmpty()) {
      return -1;
    }
    List<EntityKey> sample =
        new ArrayList<>(listed.stream().map(PendingWritesPartition.Entry::key).toList());
    Collections.shuffle(sample, ThreadLocalRandom.current());
    sample = sample.subList(0, Math.min(alpha, sample.size()));
    buffered.drainAll(sample);
    return sample.size();
  }

  /** A listed document, if any (see {@link #somePartitionsListings}). */
  Optional<EntityKey> anyDocument() {
    return somePartitionsListings().stream().findFirst().map(PendingWritesPartition.Entry::key);
  }

  /**
   * The entries of a random partition, or, when it is empty, of one that lists something: the thesis tries T+1, T+2,
   * … one by one, which cost an idle worker up to ω reads per pass (211 in the YCSB outage runs: 20 idle workers
   * slowed normal mode 5×). Late in a recovery most partitions are empty, so the ones a batched read of every
   * partition found listing something are remembered ({@link #listingPartitions}) and tried until each was found
   * empty; only then is every partition read again (20 workers doing that read on every pass took a third of their
   * CPU in the second half of a recovery). One partition's entries, so that the batch drained from them reads and
   * rewrites one log. Empty when no partition lists anything.
   */
  private List<PendingWritesPartition.Entry> somePartitionsListings() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    List<PendingWritesPartition.Entry> listed =
        partitions.get(random.nextInt(partitions.size())).entries();
    while (listed.isEmpty()) {
      List<Integer> remembered = listingPartitions.get();
      if (remembered.isEmpty()) {
        Map<Integer, List<PendingWritesPartition.Entry>> found =
            PendingWritesPartition.entriesByPartition(replicas, partitions);
        if (found.isEmpty()) {
          return List.of();
        }
        listingPartitions.set(List.copyOf(found.keySet()));
        return found.values().stream().skip(random.nextInt(found.size())).findFirst().orElseThrow();
      }
      Integer index = remembered.get(random.nextInt(remembered.size()));
      listed = partitions.get(index).entries();
      if (listed.isEmpty()) {
        listingPartitions.updateAndGet(
            now -> now.stream().filter(other -> !other.equals(index)).toList());
      }
    }
    return listed;
  }

  /** How many documents are listed, and since when the oldest (one batched read of every partition). */
  PendingWritesPartition.Backlog backlog() {
    return PendingWritesPartition.backlog(replicas, partitions);
  }

  /** Every listed document, once each (one batched read of every partition). */
  List<EntityKey> listedDocuments() {
    return PendingWritesPartition.entries(replicas, partitions).stream()
        .map(PendingWritesPartition.Entry::key)
        .distinct()
        .toList();
  }

  /** Whether any partition lists a document (one batched read of every partition). */
  boolean anyListed() {
    return !PendingWritesPartition.listings(replicas, partitions).isEmpty();
  }

  /** Pinned bytes this process buffered, every replica counted. */
  long pinnedBytes() {
    return budget.used();
  }

  /**
   * These buffered writes as the engine that {@link io.dendrite.writeback.kernel.BufferedIntervals} is built on,
   * which indexes each range write's interval with its documents; {@code repair} restores the range's log too.
   */
  DocumentEngine asEngine(ReplicaRepair repair) {
    return new DocumentEngine() {
      @Override
      public IqClient cache() {
        return cache;
      }

      @Override
      public int replicas() {
        return replicaCount;
      }

      @Override
      public List<EntityKey> listedDocuments() {
        return TeleportedWrites.this.listedDocuments();
      }

      @Override
      public Optional<OwnedRange> ownedRange() {
        return Optional.empty(); // documents are locked by their replicas' leases, across processes
      }

      @Override
      public FenceScope fenced() {
        return null;
      }

      @Override
      public void close() {
        // the TARDIS front end closes its core, which owns these
      }

      @Override
      public ReplicaRepair replicaRepair() {
        return repair;
      }

      @Override
      public BufferedWrites.StartedWrite startWrite(Map<EntityKey, ChangeSequence> changes) {
        return buffered.startWrite(changes);
      }

      @Override
      public void drainAll(Collection<EntityKey> keys) {
        LeaseLostException.untilKept(() -> buffered.drainForRead(List.copyOf(keys)));
      }

      @Override
      public Set<EntityKey> bufferedAmong(Collection<EntityKey> keys) {
        return buffered.bufferedAmong(keys);
      }
    };
  }

  /**
   * Writes every listing and listed buffered write again to each replica that lacks it (a cache server came back
   * empty).
   */
  int restoreReplicas() {
    return buffered.restoreListedReplicas();
  }
}
