package io.dendrite.iq.server;

/**
 * A cached value and its metadata. Immutable: every change stores a new item, so a reader never
 * sees a half-updated one.
 *
 * @param value the bytes
 * @param flags the client's opaque 32-bit flags
 * @param expiresAtMillis wall-clock expiry, {@code 0} for never
 * @param cas the CAS unique, assigned by the store
 * @param pinned whether the item is exempt from eviction and charged to the pinned quota
 */
record Item(byte[] value, long flags, long expiresAtMillis, long cas, boolean pinned) {

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
