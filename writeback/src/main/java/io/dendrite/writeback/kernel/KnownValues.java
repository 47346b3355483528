package io.dendrite.writeback.kernel;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.Optional;

/**
 * For {@link BufferedWriteLocks#inProcess} only: the value (or the absence of one) that this process last saw
 * confirmed on every replica of a buffered write, so that a holder of its lock need not read it from the servers.
 * Range write-back updates a document's buffered write on every write; without this each one read it back first.
 *
 * <p>Exact because nothing else changes these values: with in-process locks this process is the only writer, and
 * every change is made by the key's lock holder, which {@link #forget}s the key before it sends anything and
 * {@link #confirm}s it only once every replica confirmed. A change that failed, or whose outcome is unknown, leaves
 * the key forgotten, and so read again. Forgetting is always safe (the next holder reads), so the mirror is bounded
 * by weight and evicts freely. A replica server that restarted holds nothing where this remembers a value; the next
 * write stores the whole value on every replica again, as one that read it from the surviving replica would.
 *
 * <p>Why "this process is the only writer" holds, and so where a mirror is used at all: only under a {@code
 * singleProcess} engine's exclusive claim on the cache tier ({@link EngineClaim}). While it holds the claim no other
 * engine, shared or exclusive, may start, so none can have buffered anything since a value was confirmed; the claim
 * is checked before every locking, right before the mirror is consulted, so the mirror widens none of the claim's own
 * gap (a holder paused between that check and its write, {@code docs/write-back.md}). A range-owned engine's fence
 * keeps the range's other owners out, but nothing keeps a shared engine, or another range's, off the same documents:
 * such an engine remembers nothing ({@link #none}) and reads every buffered write it changes under its lock, so what
 * it stores is built on what was there a moment before, not on what it saw at its last write (a write of the other
 * engine landing between that read and the store is still overwritten: nothing makes the two exclude each other).
 */
public final class KnownValues {
  /** Remembered absence: nothing is buffered for the key. Compared by identity, never stored on a server. */
  private static final byte[] ABSENT = new byte[0];

  /** A key's bookkeeping in the mirror, besides its bytes. */
  private static final int ENTRY_OVERHEAD = 96;

  private final Cache<String, byte[]> known;

  /** False for {@link #none}: remembers nothing, every holder reads. */
  private final boolean remembers;

  public KnownValues(long maxBytes) {
    this(maxBytes, true);
  }

  /** A mirror that remembers nothing, for locks whose holder cannot count itself the only writer. */
  public static KnownValues none() {
    return new KnownValues(0, false);
  }

  private KnownValues(long maxBytes, boolean remembers) {
    this.remembers = remembers;
    this.known =
        Caffeine.newBuilder()
            .maximumWeight(maxBytes)
            .weigher((String key, byte[] value) -> ENTRY_OVERHEAD + 2 * key.length() + value.length)
            .executor(Runnable::run) // evicts on the caller's thread: no pool, nothing to shut down
            .build();
  }

  /**
   * What is known of {@code key}'s value: empty when unknown (read it), a present {@code Optional} of an empty
   * {@code Optional} when known to have none.
   */
  public Optional<Optional<byte[]>> get(String key) {
    byte[] value = known.getIfPresent(key);
    if (value == null) {
      return Optional.empty();
    }
    return Optional.of(value == ABSENT ? Optional.empty() : Optional.of(value));
  }

  /** The replica placement version the remembered values were confirmed under. */
  private volatile long placementVersion;

  /**
   * Forgets everything when replica placement changed since the last call ({@code version}, {@link
   * io.dendrite.iq.client.ReplicaPlacement#version}): a value confirmed on a key's former servers, or its
   * absence there, says nothing of its servers now.
   */
  public void placement(long version) {
    if (version != placementVersion) {
      synchronized (this) {
        if (version != placementVersion) {
          known.invalidateAll();
          placementVersion = version;
        }
      }
    }
  }

  /** Before a change to {@code key} is sent: until it is confirmed, its value is unknown. */
  public void forget(String key) {
    known.invalidate(key);
  }

  /** Every replica confirmed {@code value} for {@code key}; {@code null}: every replica confirmed its deletion. */
  public void confirm(String key, byte[] value) {
    if (!remembers) {
      return;
    }
    known.put(key, value == null ? ABSENT : value);
  }

  /** How many keys are remembered (tests). */
  public long size() {
    known.cleanUp();
    return known.estimatedSize();
  }
}
