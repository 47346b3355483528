package io.dendrite.iq.client;

import java.time.Duration;

/**
 * How a value is stored: its client flags, its time to live and whether it is pinned (kept out of
 * eviction, counted against the server's pinned-memory quota).
 *
 * @param flags   opaque client flags stored with the value
 * @param ttl     time to live, {@link Duration#ZERO} for none; whole seconds on the wire
 * @param pinned  whether the server must not evict it
 */
public record WriteOptions(int flags, Duration ttl, boolean pinned) {

    /** No flags, no expiry, not pinned. */
    public static final WriteOptions DEFAULT = new WriteOptions(0, Duration.ZERO, false);

    /** No flags, no expiry, pinned. */
    public static final WriteOptions PINNED = new WriteOptions(0, Duration.ZERO, true);

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

    long ttlSeconds() {
        return ttl.toSeconds();
    }
}
