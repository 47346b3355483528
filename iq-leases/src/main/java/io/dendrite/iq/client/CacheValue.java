package io.dendrite.iq.client;

import java.nio.charset.StandardCharsets;

/**
 * A value read from a cache server.
 *
 * @param key     the key it was read under
 * @param data    the value bytes (not copied; do not modify)
 * @param flags   the client flags stored with it
 * @param cas     the CAS unique for {@link IqClient#cas}; 0 when the reply carried none
 * @param pending the TARDIS pending bit reported by IQ reads (not pinning); false for plain reads
 */
public record CacheValue(String key, byte[] data, int flags, long cas, boolean pending) {

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
