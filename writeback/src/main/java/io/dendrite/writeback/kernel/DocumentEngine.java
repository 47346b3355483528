package io.dendrite.writeback.kernel;

import io.dendrite.core.OwnedRange;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A per-document engine as {@link BufferedIntervals} builds on it: the steps beyond a document write-back engine's
 * public API that indexing range writes over its buffered writes takes. Two engines implement it: {@code
 * DocumentWriteBack}, privately, for {@code RangeWriteBack}, which shares its package and so reaches it without any
 * public or global hook; and TARDIS's teleported writes.
 */
public interface DocumentEngine {

  /** The cache servers holding the engine's buffered writes ({@link BufferedIntervals}' log goes there too). */
  IqClient cache();

  /** R: the servers each buffered write is pinned on, which {@link BufferedIntervals}' log records share. */
  int replicas();

  /** Every document the pending-writes partitions list as buffered now (one batched read of them all). */
  List<EntityKey> listedDocuments();

  /** The range whose lease the engine holds ({@code DocumentWriteBack.Builder#ownedRange}), if it is owned by one. */
  Optional<OwnedRange> ownedRange();

  /**
   * For a range-owned engine, the scope guarding the calling thread's cache requests with the range's fence (close
   * it after them); null, which try-with-resources skips, otherwise.
   */
  FenceScope fenced();

  /** Closes the engine: for the buffered intervals of the one range a range-owned engine serves. */
  void close();

  /** The repair that restores the engine's copies; {@link BufferedIntervals} registers its log's restore with it. */
  ReplicaRepair replicaRepair();

  /** Buffers several documents' changes in steps whose requests go out together. */
  BufferedWrites.StartedWrite startWrite(Map<EntityKey, ChangeSequence> changes);

  /**
   * Applies the buffered writes those of {@code keys} have to the data store now, as a miss must.
   *
   * @throws io.dendrite.writeback.engine.UndecodableValueException when one cannot be decoded (see {@link
   *     BufferedWrites#drainForRead})
   */
  void drainAll(Collection<EntityKey> keys);

  /** Those of {@code keys} that have a buffered write right now (a lock-free look, one batch of reads). */
  Set<EntityKey> bufferedAmong(Collection<EntityKey> keys);
}
