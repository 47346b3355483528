package io.dendrite.writeback.internal;

import java.time.Duration;

/** The checks builders' setters make, each naming the setting and the value it refused. */
public final class Arguments {
  private Arguments() {}

  /** {@code value}, if it is at least {@code least}. */
  public static int atLeast(String name, int least, int value) {
    if (value < least) {
      throw new IllegalArgumentException(name + " must be at least " + least + ", got " + value);
    }
    return value;
  }

  /** {@code value}, if it is a duration of zero or more. */
  public static Duration notNegative(String name, Duration value) {
    if (value == null || value.isNegative()) {
      throw new IllegalArgumentException(
          name + " must be a duration of zero or more, got " + value);
    }
    return value;
  }
}
