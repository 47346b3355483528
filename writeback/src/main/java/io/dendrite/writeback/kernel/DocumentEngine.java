package io.dendrite.writeback.kernel;

import io.dendrite.core.OwnedRange;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.document.DocumentWriteBack;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * What range write-back uses of the per-document engine it is built on, beyond that engine's public API. {@code
 * RangeWriteBack} lives in a package of its own and takes a {@link DocumentWriteBack} from the user; these steps are not for
 * users, so {@code DocumentWriteBack} does not make them public but hands them out through {@link #of}, in a package the
 * library does not export (as the JDK's own packages share internals).
 */
public interface DocumentEngine {

  /** The cache servers holding the engine's buffered writes (a range write-back's log goes there too). */
  IqClient cache();

  /** R: the servers each buffered write is pinned on, which range write-back's log records share. */
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

  /** Closes the engine ({@code DocumentWriteBack#close}): for the range write-back that owns a range-owned engine. */
  void close();

  /** The repair that restores the engine's copies; range write-back registers its log's restore with it. */
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

  /** The steps of {@code writeBack}'s engine. */
  static DocumentEngine of(DocumentWriteBack writeBack) {
    Objects.requireNonNull(writeBack, "writeBack");
    return Access.engines.apply(writeBack);
  }

  /** Where {@code DocumentWriteBack} installs, when its class is initialized, the one way to reach its steps. */
  final class Access {
    private static volatile Function<DocumentWriteBack, DocumentEngine> engines;

    private Access() {}

    /**
     * Called once by {@code DocumentWriteBack}'s static initializer: a {@code DocumentWriteBack} passed to {@link #of} exists, so
     * its class is initialized and this was called before.
     */
    public static void install(Function<DocumentWriteBack, DocumentEngine> enginesOfWriteBacks) {
      if (engines != null) {
        throw new IllegalStateException("already installed");
      }
      engines = enginesOfWriteBacks;
    }
  }
}
