package io.dendrite.tardis;

import io.dendrite.writeback.change.ChangeSequence;
import java.util.Map;
import java.util.Optional;

/**
 * How a {@link Tardis} keeps the cached copies of documents ({@code Doc:} keys, {@link CachedDocuments}) in step with
 * the writes and misses that its core decides: under I/Q leases on our IQ servers ({@link LeasedCopies}), under a
 * lock key per document on stock memcached ({@link LockedCopies}). Either way, a document's writes and misses run one
 * at a time, so a miss never caches a value older than a write it overlapped.
 */
interface DocumentCopies {

  /**
   * The document's fields: its cached copy, or on a miss what {@code load} returns (the core's miss: the data store,
   * after Recon's check), cached where that is safe.
   */
  Optional<Map<String, Object>> read(String cacheKey, Load load);

  /**
   * Runs {@code durable} (the core's write: to the data store, or buffered) while no other write or miss of the
   * document runs, then refreshes the cached copy, if any, with {@code changes}, or drops it. Once {@code durable}
   * returned the write is acknowledged, whatever happens to the copy.
   *
   * @throws TardisOutcomeUnknownException from {@code durable}: the cached copy is dropped
   */
  void write(String cacheKey, ChangeSequence changes, DurableWrite durable);

  /** A miss's read of the data store. */
  @FunctionalInterface
  interface Load {
    /**
     * Reads the document.
     *
     * @param pending what the lease grant said of the document's pending marker ({@link Solution#CONTEXTUAL}); null
     *     where no lease was granted or the servers keep no markers (stock memcached)
     */
    Optional<Map<String, Object>> load(Boolean pending);
  }

  /** A write made durable, in the data store or buffered. */
  @FunctionalInterface
  interface DurableWrite {
    /**
     * Makes the write durable.
     *
     * @param pending as for {@link Load#load}
     * @return whether the copy's pending marker must stay (the write was buffered under {@link Solution#CONTEXTUAL});
     *     false clears it, where the servers keep markers
     */
    boolean run(Boolean pending);
  }
}
