package io.dendrite.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Names of a range's cache entries: {@code dd:<collection>:<domain>:<lb>:<ub>} for the result set of
 * [lb, ub], hashed when it would pass memcached's 250-byte key limit, and
 * {@code dl:<collection>:<domain>:<n>} for the range's log partitions.
 */
final class CacheKeys<K extends Comparable<? super K>> {
  static final int MAX_KEY_BYTES = 250;

  private final DomainType<K> type;
  private final String prefix;
  private final String logPrefix;

  CacheKeys(String collection, String domain, DomainType<K> type) {
    this.type = type;
    this.prefix =
        "dd:"
            + RangeNames.check("collection", collection)
            + ":"
            + RangeNames.check("domain", domain)
            + ":";
    this.logPrefix = "dl:" + collection + ":" + domain + ":";
  }

  /** The key of the result set of {@code interval}. */
  String entryKey(Interval<K> interval) {
    String key = prefix + type.format(interval.lo()) + ":" + type.format(interval.hi());
    if (key.getBytes(StandardCharsets.UTF_8).length <= MAX_KEY_BYTES) {
      return key;
    }
    return prefix + "#" + sha256(key);
  }

  /** The key of log partition {@code n}. */
  String logKey(int n) {
    return logPrefix + n;
  }

  private static String sha256(String text) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
