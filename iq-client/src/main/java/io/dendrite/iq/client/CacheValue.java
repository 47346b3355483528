package io.dendrite.iq.client;

import io.dendrite.iq.protocol.ItemFlags;
import java.nio.charset.StandardCharsets;

/**
 * A value read from a cache server.
 *
 * @param key     the key it was read under
 * @param data    the value bytes (not copied; do not modify)
 * @param flags   the client flags stored with it; on Dendrite's IQ server bit 31 is the server's, see {@link #pinned()}
 * @param cas     the CAS unique for {@link IqClient#cas}; 0 when the reply carried none
 * @param pending the TARDIS pending bit reported by IQ reads (not pinning); false for plain reads
 */
public record CacheValue(String key, byte[] data, int flags, long cas, boolean pending) {

  /**
   * Whether the server holds the item pinned, as Dendrite's IQ server reports it in bit 31 of the flags, which it
   * sets and clears itself whatever a client stores (other servers keep the bit as it was sent). With {@code
   * --pin-users} only a pin user can have made a pinned item: write-back takes an unpinned value under its keys for
   * a stranger's and never applies it.
   */
  public boolean pinned() {
    return (flags & ItemFlags.PINNED) != 0;
  }

  /** The value decoded as UTF-8, for text values. */
  public String text() {
    return new String(data, StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "CacheValue["
        + key
        + "="
        + (data.length <= 64 ? text() : data.length + " bytes")
        + ", flags="
        + flags
        + ", cas="
        + cas
        + ", pending="
        + pending
        + "]";
  }
}
