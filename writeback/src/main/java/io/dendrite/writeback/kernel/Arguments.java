package io.dendrite.writeback.kernel;

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

  /** R when none is asked for: one server's loss or restart loses no buffered write. */
  public static final int DEFAULT_REPLICAS = 2;

  /**
   * The R a write-back engine runs with over a cache of {@code servers} servers: {@code asked}, or {@value
   * #DEFAULT_REPLICAS} when 0 (none asked for).
   *
   * @throws IllegalStateException when R exceeds the servers, and when none was asked for and the cache has one
   *     server: a single copy is lost with its server, so it must be asked for, knowing that
   */
  public static int replicas(int asked, int servers) {
    if (asked == 0) {
      if (servers < DEFAULT_REPLICAS) {
        throw new IllegalStateException(
            "write-back keeps every buffered write on "
                + DEFAULT_REPLICAS
                + " cache servers by default, so that losing or restarting one loses none of them, but this"
                + " cache has "
                + servers
                + " server: give it another, or ask for replicas(1) explicitly, accepting that a restart or"
                + " loss of that server loses every write buffered on it and not yet drained");
      }
      return DEFAULT_REPLICAS;
    }
    if (asked > servers) {
      throw new IllegalStateException(
          "replicas (" + asked + ") must not exceed the cache's " + servers + " servers");
    }
    return asked;
  }
}
