package io.dendrite.core;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What one write left in the cache servers for the cached results it touched, told by its {@link WritePath} once the
 * write's commit succeeded, so that the near cache can keep the results current instead of dropping them: a result
 * rewritten whole (its new rows), or one that took the write's change record (the near cache applies the change to
 * the copy it held). A result not named here is dropped from the near cache.
 *
 * <p>It also tells the write path which results the near cache held when the write began ({@link #heldLocally}):
 * the range's sole owner may take those out of the cache servers and keep them current in its memory alone.
 *
 * @param <R> the row type
 */
final class RefreshedResults<R> {
  private final Map<String, LocalResults.Copy<R>> rewritten = new HashMap<>();
  private final Map<String, Integer> appended = new HashMap<>();
  private final Set<String> heldLocally;
  private final Set<String> detached = new HashSet<>();

  /** For a write without a near cache. */
  RefreshedResults() {
    this(Set.of());
  }

  /** {@code heldLocally}: the results whose near copy the write marked (and will keep current if it commits). */
  RefreshedResults(Set<String> heldLocally) {
    this.heldLocally = heldLocally;
  }

  /** Whether the near cache held {@code key}'s result when the write began. */
  boolean heldLocally(String key) {
    return heldLocally.contains(key);
  }

  /** {@code key}'s result now holds {@code result}: its rows, normalized to its interval, and encoded size. */
  void rewritten(String key, LocalResults.Copy<R> result) {
    rewritten.put(key, result);
  }

  /**
   * {@code key}'s result took the write's change record of {@code recordBytes} bytes (in the cache servers, or, for
   * a result only the near cache keeps, there alone).
   */
  void appended(String key, int recordBytes) {
    appended.put(key, recordBytes);
  }

  /**
   * {@code key}'s result is kept in the near cache alone, which takes the write's change record of {@code
   * recordBytes} bytes; the cache servers hold no value for it.
   */
  void detached(String key, int recordBytes) {
    appended.put(key, recordBytes);
    detached.add(key);
  }

  /** Whether {@code key}'s result is kept in the near cache alone ({@link #detached}). */
  boolean isDetached(String key) {
    return detached.contains(key);
  }

  /** The rows {@code key}'s result was rewritten with, or null. */
  LocalResults.Copy<R> rewrittenTo(String key) {
    return rewritten.get(key);
  }

  /** The size of the change record {@code key}'s result took, or -1 when it took none. */
  int appendedBytes(String key) {
    return appended.getOrDefault(key, -1);
  }
}
