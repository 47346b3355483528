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
 * @param pending TARDIS's pending bit {@code p}: a buffered write for this key may exist
 */
record Item(
    byte[] value, long flags, long expiresAtMillis, long cas, boolean pinned, boolean pending) {

  boolean isExpired(long nowMillis) {
    return expiresAtMillis != 0 && expiresAtMillis <= nowMillis;
  }

  Item withValue(byte[] newValue) {
    return new Item(newValue, flags, expiresAtMillis, cas, pinned, pending);
  }

  Item withExpiry(long newExpiresAtMillis) {
    return new Item(value, flags, newExpiresAtMillis, cas, pinned, pending);
  }

  Item withPinned(boolean newPinned) {
    return new Item(value, flags, expiresAtMillis, cas, newPinned, pending);
  }

  Item withPending(boolean newPending) {
    return new Item(value, flags, expiresAtMillis, cas, pinned, newPending);
  }

  /** {@code p} as printed in IQ replies. */
  int pendingBit() {
    return pending ? 1 : 0;
  }
}
