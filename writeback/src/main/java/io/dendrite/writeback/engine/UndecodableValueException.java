package io.dendrite.writeback.engine;

/**
 * A read met a buffered value it cannot decode (truncated, written by another client, or by a later version of
 * Dendrite), so it cannot apply it first: rather than serve a result that ignores a write it cannot see, it fails.
 * Nothing was changed by the failure. A drain moves such a value aside to {@link #QUARANTINE_PREFIX} plus its key,
 * where it stays, pinned, until an operator deletes it; reads succeed again once it is moved (see {@code
 * docs/write-back.md}, "Undecodable buffered values"). A write to a document whose buffered value is undecodable
 * fails the same way, not acknowledged.
 */
public final class UndecodableValueException extends IllegalStateException {
  /** What a drain puts before the key of a value it moves aside ({@code Undecodable:BW:users:42}). */
  public static final String QUARANTINE_PREFIX = "Undecodable:";

  private final String key;

  /**
   * @param key the cache key of the value
   * @param cause why it cannot be decoded
   */
  public UndecodableValueException(String key, Throwable cause) {
    super(
        "the buffered value under "
            + key
            + " cannot be decoded ("
            + cause.getMessage()
            + "), so it cannot be applied; a drain moves it aside to "
            + QUARANTINE_PREFIX
            + key,
        cause);
    this.key = key;
  }

  /** The cache key of the value that cannot be decoded. */
  public String key() {
    return key;
  }
}
