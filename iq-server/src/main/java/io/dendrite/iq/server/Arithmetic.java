package io.dendrite.iq.server;

import io.dendrite.iq.protocol.MalformedRequestException;
import java.nio.charset.StandardCharsets;

/** Memcached's incr/decr on a decimal value: unsigned 64-bit, incr wraps, decr stops at zero. */
final class Arithmetic {

  private Arithmetic() {}

  static byte[] apply(byte[] value, long delta, boolean increment) {
    long current = parse(value);
    long next;
    if (increment) {
      next = current + delta;
    } else {
      next = Long.compareUnsigned(current, delta) < 0 ? 0 : current - delta;
    }
    return Long.toUnsignedString(next).getBytes(StandardCharsets.US_ASCII);
  }

  private static long parse(byte[] value) {
    String text = new String(value, StandardCharsets.US_ASCII).trim();
    if (text.isEmpty() || text.length() > 20 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new MalformedRequestException("cannot increment or decrement non-numeric value");
    }
    try {
      return Long.parseUnsignedLong(text);
    } catch (NumberFormatException e) {
      throw new MalformedRequestException("cannot increment or decrement non-numeric value");
    }
  }
}
