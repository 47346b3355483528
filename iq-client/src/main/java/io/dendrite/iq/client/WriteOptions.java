package io.dendrite.iq.client;

import java.time.Duration;

/**
 * How a value is stored: its client flags, its time to live and whether it is pinned (kept out of
 * eviction, counted against the server's pinned-memory quota).
 *
 * @param flags   opaque client flags stored with the value
 * @param ttl     time to live, {@link Duration#ZERO} for none; rounded up to whole seconds on the wire
 * @param pinned  whether the server must not evict it
 */
public record WriteOptions(int flags, Duration ttl, boolean pinned) {

  /** No flags, no expiry, not pinned. */
  public static final WriteOptions DEFAULT = new WriteOptions(0, Duration.ZERO, false);

  /** No flags, no expiry, pinned. */
  public static final WriteOptions PINNED = new WriteOptions(0, Duration.ZERO, true);

  private static final long MAX_RELATIVE_SECONDS = 30L * 24 * 3600;

  public WriteOptions {
    if (ttl.isNegative()) {
      throw new IllegalArgumentException("negative ttl " + ttl);
    }
  }

  /** A copy with other flags. */
  public WriteOptions withFlags(int newFlags) {
    return new WriteOptions(newFlags, ttl, pinned);
  }

  /** A copy with another time to live. */
  public WriteOptions withTtl(Duration newTtl) {
    return new WriteOptions(flags, newTtl, pinned);
  }

  /** A copy that is pinned or not. */
  public WriteOptions withPinned(boolean newPinned) {
    return new WriteOptions(flags, ttl, newPinned);
  }

  /**
   * The exptime field: whole seconds rounded up (a sub-second TTL must not become 0, "never"),
   * and an absolute Unix time beyond 30 days, because memcached reads larger numbers that way.
   */
  long exptime() {
    long seconds = ttl.plusNanos(999_999_999).toSeconds();
    return seconds > MAX_RELATIVE_SECONDS ? System.currentTimeMillis() / 1000 + seconds : seconds;
  }
}
