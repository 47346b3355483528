package io.dendrite.iq.server;

import io.dendrite.iq.protocol.ItemFlags;

/**
 * A cached value and its metadata. Immutable: every change stores a new item, so a reader never
 * sees a half-updated one.
 *
 * @param value the bytes
 * @param flags the client's opaque 32-bit flags, but for {@link ItemFlags#PINNED}, which always says whether the
 *     item is pinned
 * @param expiresAtMillis wall-clock expiry, {@code 0} for never
 * @param cas the CAS unique, assigned by the store
 * @param pinned whether the item is exempt from eviction and charged to the pinned quota
 */
record Item(byte[] value, long flags, long expiresAtMillis, long cas, boolean pinned) {

  private static final long PINNED_FLAG = Integer.toUnsignedLong(ItemFlags.PINNED);

  Item {
    // The server's word on pinning, not the client's: a reader can trust it.
    flags = pinned ? flags | PINNED_FLAG : flags & ~PINNED_FLAG;
  }

  boolean isExpired(long nowMillis) {
    return expiresAtMillis != 0 && expiresAtMillis <= nowMillis;
  }

  Item withValue(byte[] newValue) {
    return new Item(newValue, flags, expiresAtMillis, cas, pinned);
  }

  Item withExpiry(long newExpiresAtMillis) {
    return new Item(value, flags, newExpiresAtMillis, cas, pinned);
  }

  Item withPinned(boolean newPinned) {
    return new Item(value, flags, expiresAtMillis, cas, newPinned);
  }
}
