package io.dendrite.tardis;

import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.kernel.BufferedWriteLocks;
import io.dendrite.writeback.kernel.PinnedReplicas;
import io.dendrite.writeback.kernel.ServerMemoryFullException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cached copies on stock memcached, which has no leases: hits are plain {@code get}s, and a miss or a write takes the
 * document's lock key ({@code Lock:Doc:…}, {@link io.dendrite.writeback.kernel.RedleaseLocks}) first, so they run
 * one at a time. A miss reads the copy again under the lock (another miss may have filled it), else loads the
 * document and {@code add}s it; a write reads the copy under the lock, makes the write durable, and refreshes the copy
 * by {@code cas} on what it read, or deletes it.
 *
 * <p>Weaker than leases: a holder paused past its lock's lifetime is refused by the {@code cas} if the copy changed
 * meanwhile, but a miss paused that long can still {@code add} a copy that a write made stale after the copy was gone
 * (evicted, or never cached); see docs/tardis.md.
 */
final class LockedCopies implements DocumentCopies {
  private static final Logger log = LoggerFactory.getLogger(LockedCopies.class);

  private final PinnedReplicas copies;
  private final BufferedWriteLocks locks;

  /** {@code copies}: one replica per document, where its lock lives too. */
  LockedCopies(PinnedReplicas copies, BufferedWriteLocks locks) {
    this.copies = copies;
    this.locks = locks;
  }

  @Override
  public Optional<Map<String, Object>> read(String cacheKey, Load load) {
    Optional<byte[]> hit = copies.get(cacheKey);
    if (hit.isPresent()) {
      return CachedDocuments.decode(hit.get());
    }
    BufferedWriteLocks.Locked lock;
    try {
      lock = locks.lock(List.of(cacheKey));
    } catch (ServerMemoryFullException noRoomForTheLock) {
      // No room to cache it either: served from the data store, not cached.
      return load.load(null);
    }
    try (lock) {
      byte[] filled = lock.values().get(cacheKey);
      if (filled != null) {
        return CachedDocuments.decode(filled);
      }
      Optional<Map<String, Object>> fields = load.load(null);
      lock.stage(cacheKey, CachedDocuments.encode(fields));
      try {
        lock.commit(); // a refusal (no memory) leaves it uncached
      } catch (RuntimeException notCached) {
        log.debug("{} was read but not cached: {}", cacheKey, notCached.toString());
      }
      return fields;
    }
  }

  @Override
  public void write(String cacheKey, ChangeSequence changes, DurableWrite durable) {
    try (BufferedWriteLocks.Locked lock = locks.lock(List.of(cacheKey))) {
      try {
        durable.run(null); // no markers on stock memcached
      } catch (TardisOutcomeUnknownException unknown) {
        drop(cacheKey, unknown);
        throw unknown;
      }
      // Durable from here: the write is acknowledged whatever happens to the cached copy.
      byte[] cached = lock.values().get(cacheKey);
      if (cached == null) {
        return;
      }
      try {
        Optional<Map<String, Object>> after = changes.applyTo(CachedDocuments.decode(cached));
        lock.stage(cacheKey, CachedDocuments.encode(after));
        Outcome refreshed = lock.commit();
        if (!refreshed.isOk()) {
          drop(cacheKey, new IllegalStateException("the refresh was refused: " + refreshed));
        }
      } catch (RuntimeException notRefreshed) {
        drop(cacheKey, notRefreshed);
      }
    }
  }

  /**
   * Deletes the cached copy a write could not refresh, or whose outcome is unknown, so that no read finds the old
   * value (deleting is always safe: the next miss reads the data store under the lock). If even that fails, the old
   * value stays until it is written or deleted again, which is logged.
   */
  private void drop(String cacheKey, RuntimeException why) {
    try {
      copies.delete(cacheKey);
    } catch (RuntimeException notDropped) {
      notDropped.addSuppressed(why);
      log.warn(
          "a write was applied but the cached copy {} could not be refreshed or dropped",
          cacheKey,
          notDropped);
    }
  }
}
