package io.dendrite.core;

import java.util.regex.Pattern;

/**
 * The rule for a range's collection and domain names, which become parts of cache keys: 1 to 64 characters of
 * {@code [A-Za-z0-9_.-]}, so a key never holds memcached's separators. Public because whatever else is keyed by a
 * range (the write-back module's BuWrInT log) must accept exactly the names a {@link Dendrite} accepts.
 */
public final class RangeNames {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.\\-]{1,64}");

  private RangeNames() {}

  /**
   * Returns {@code name} when it follows the rule.
   *
   * @param what what the name names ("collection", "domain"), for the message
   * @throws IllegalArgumentException naming {@code what} and the rule otherwise
   */
  public static String check(String what, String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          what + " name must be 1-64 characters of [A-Za-z0-9_.-], got " + name);
    }
    return name;
  }
}
