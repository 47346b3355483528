package io.dendrite.core;

import java.util.HashMap;
import java.util.Map;

/**
 * What one write left in the cache servers for the cached results it touched, told by its {@link WritePath} once the
 * write's commit succeeded, so that the near cache can keep the results current instead of dropping them: a result
 * rewritten whole (its new rows), or one that took the write's change record (the near cache applies the change to
 * the copy it held). A result not named here is dropped from the near cache.
 *
 * @param <R> the row type
 */
final class RefreshedResults<R> {
  private final Map<String, LocalResults.Copy<R>> rewritten = new HashMap<>();
  private final Map<String, Integer> appended = new HashMap<>();

  /** {@code key}'s result now holds {@code result}: its rows, normalized to its interval, and encoded size. */
  void rewritten(String key, LocalResults.Copy<R> result) {
    rewritten.put(key, result);
  }

  /** {@code key}'s result took the write's change record of {@code recordBytes} bytes. */
  void appended(String key, int recordBytes) {
    appended.put(key, recordBytes);
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
