package io.dendrite.ycsb;

/**
 * The record number inside a YCSB key. With {@code insertorder=ordered} YCSB names record {@code n} "user"
 * followed by {@code n} (left-padded with zeros to {@code zeropadding} digits), so consecutive numbers are
 * consecutive records and a scan of {@code count} records from {@code n} is the range [n, n + count - 1] of the
 * numeric attribute every binding stores beside the key.
 */
final class RecordKey {

  private RecordKey() {}

  /**
   * The number at the end of {@code key}: its trailing decimal digits, leading zeros ignored.
   *
   * @throws IllegalArgumentException if the key is null, does not end in digits, or the number exceeds a long
   */
  static long number(String key) {
    if (key == null) {
      throw new IllegalArgumentException("YCSB key must not be null");
    }
    int start = key.length();
    while (start > 0 && Character.isDigit(key.charAt(start - 1))) {
      start--;
    }
    if (start == key.length()) {
      throw new IllegalArgumentException(
          "YCSB key \""
              + key
              + "\" does not end in a record number"
              + " (keys look like user<number>; run YCSB with insertorder=ordered)");
    }
    try {
      return Long.parseLong(key, start, key.length(), 10);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "YCSB key \"" + key + "\" has a record number beyond 64 bits", e);
    }
  }

  /**
   * The key YCSB's core workload gives record {@code number}: "user", then the number left-padded with zeros to
   * {@code zeroPadding} digits (its {@code zeropadding} property).
   */
  static String of(long number, int zeroPadding) {
    String digits = Long.toString(number);
    return "user" + "0".repeat(Math.max(0, zeroPadding - digits.length())) + digits;
  }

  /**
   * The last record number a scan of {@code count} records starting at {@code first} covers.
   *
   * @throws IllegalArgumentException if {@code count} is not positive or the range would pass Long.MAX_VALUE
   */
  static long scanEnd(long first, int count) {
    if (count < 1) {
      throw new IllegalArgumentException("scan length must be at least 1, got " + count);
    }
    if (first > Long.MAX_VALUE - (count - 1)) {
      throw new IllegalArgumentException(
          "a scan of " + count + " records from " + first + " passes Long.MAX_VALUE");
    }
    return first + count - 1;
  }
}
