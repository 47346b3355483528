package io.dendrite.iq.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * How long to wait between retries of a hot miss (another client holds the lease) and when to give
 * up. Delays double from {@code initialDelay} up to {@code maxDelay}; each is shortened by a random
 * part of up to {@code jitter} of itself so that clients that collided do not collide again in step.
 * Once {@code deadline} has passed since the first attempt the caller gets a typed "busy" result.
 *
 * @param initialDelay first wait
 * @param maxDelay     cap on any single wait
 * @param deadline     total time after which to give up
 * @param jitter       fraction (0..1) of each wait that is randomised
 */
public record Backoff(Duration initialDelay, Duration maxDelay, Duration deadline, double jitter) {

  /** 1 ms doubling to 50 ms, giving up after 2 s, half of each wait randomised. */
  public static final Backoff DEFAULT =
      new Backoff(Duration.ofMillis(1), Duration.ofMillis(50), Duration.ofSeconds(2), 0.5);

  /** A single attempt: busy at the first hot miss. */
  public static final Backoff ONCE =
      new Backoff(Duration.ofMillis(1), Duration.ofMillis(1), Duration.ZERO, 0);

  public Backoff {
    if (initialDelay.isNegative()
        || initialDelay.isZero()
        || maxDelay.compareTo(initialDelay) < 0
        || deadline.isNegative()
        || jitter < 0
        || jitter > 1) {
      throw new IllegalArgumentException(
          "bad backoff "
              + initialDelay
              + ".."
              + maxDelay
              + " deadline "
              + deadline
              + " jitter "
              + jitter);
    }
  }

  /**
   * Runs {@code attempt} until it gives a result that is not {@code busy} or the deadline passes.
   *
   * @param gaveUp builds the result for "still busy at the deadline" from the time spent
   * @return the first non-busy result, or {@code gaveUp}'s once the deadline has passed
   */
  <T> T retry(Supplier<T> attempt, Predicate<T> busy, Function<Duration, T> gaveUp) {
    long start = System.nanoTime();
    long deadlineNanos = deadline.toNanos();
    long delay = initialDelay.toNanos();
    while (true) {
      T result = attempt.get();
      long elapsed = System.nanoTime() - start;
      if (!busy.test(result)) {
        return result;
      }
      if (elapsed >= deadlineNanos) {
        return gaveUp.apply(Duration.ofNanos(elapsed));
      }
      long wait = delay - (long) (ThreadLocalRandom.current().nextDouble() * jitter * delay);
      sleepNanos(Math.min(wait, deadlineNanos - elapsed));
      delay = Math.min(delay * 2, maxDelay.toNanos());
    }
  }

  private static void sleepNanos(long nanos) {
    try {
      Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IqException("interrupted while backing off", e);
    }
  }
}
