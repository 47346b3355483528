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
 * the range's sole owner may take those out of the cache servers and keep them current in its memory alone; and,
 * while the near cache has room ({@link #mayAdopt}), the others too, read from the servers as it deletes them there
 * ({@link #adopted}).
 *
 * @param <R> the row type
 */
final class RefreshedResults<R> {
  private final Map<String, LocalResults.Copy<R>> rewritten = new HashMap<>();
  private final Map<String, Integer> appended = new HashMap<>();
  private final Set<String> heldLocally;
  private final boolean mayAdopt;
  private final Set<String> detached = new HashSet<>();
  private final Map<String, LocalResults.Copy<R>> adoptedFrom = new HashMap<>();
  private byte[] encodedChange;

  /** For a write without a near cache. */
  RefreshedResults() {
    this(Set.of(), false);
  }

  /**
   * {@code heldLocally}: the results whose near copy the write marked (and will keep current if it commits); {@code
   * mayAdopt}: whether the near cache has room for results it does not hold yet.
   */
  RefreshedResults(Set<String> heldLocally, boolean mayAdopt) {
    this.heldLocally = heldLocally;
    this.mayAdopt = mayAdopt;
  }

  /** Whether the write may take results the near cache does not hold yet into it ({@link #adopted}). */
  boolean mayAdopt() {
    return mayAdopt;
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

  /**
   * {@code key}'s result, which the near cache did not hold, is kept there alone from now on: {@code before} is the
   * servers' value as the write read it before deleting it, to which the near cache applies the write's change record
   * of {@code recordBytes} bytes.
   */
  void adopted(String key, LocalResults.Copy<R> before, int recordBytes) {
    detached(key, recordBytes);
    adoptedFrom.put(key, before);
  }

  /** The write's change as {@link ChangeRecords#encode} gave it, so that the near cache need not encode it again. */
  void encodedChange(byte[] encoded) {
    this.encodedChange = encoded;
  }

  /** What {@link #encodedChange(byte[])} was given, or null. */
  byte[] encodedChange() {
    return encodedChange;
  }

  /** The servers' value of an {@link #adopted} result before the write, or null. */
  LocalResults.Copy<R> adoptedFrom(String key) {
    return adoptedFrom.get(key);
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
