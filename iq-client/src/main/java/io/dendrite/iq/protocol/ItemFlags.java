package io.dendrite.iq.protocol;

/**
 * The bit of an item's 32-bit flags that Dendrite's IQ server owns: it reads 1 exactly when the item is pinned, in
 * every reply that carries flags. The server sets and clears it itself, whatever a client sends, so a client can
 * tell a pinned item (one only a pin user can have made, with {@code --pin-users}) from an unpinned one that merely
 * claims to be.
 */
public final class ItemFlags {
  /** Bit 31: the top bit, which memcached clients' own flag schemes leave alone. */
  public static final int PINNED = 0x8000_0000;

  private ItemFlags() {}
}
