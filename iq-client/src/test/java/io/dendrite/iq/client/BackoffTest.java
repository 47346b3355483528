package io.dendrite.iq.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BackoffTest {

  private final Backoff backoff =
      new Backoff(Duration.ofMillis(1), Duration.ofMillis(16), Duration.ofMillis(200), 0.5);

  @Test
  void retriesUntilTheAttemptIsNoLongerBusy() {
    AtomicInteger attempts = new AtomicInteger();
    String result =
        backoff.retry(
            () -> attempts.incrementAndGet() < 4 ? "busy" : "done",
            "busy"::equals,
            waited -> "gave up");
    assertThat(result).isEqualTo("done");
    assertThat(attempts).hasValue(4);
  }

  @Test
  void givesUpAtTheDeadlineWithoutOverrunningItMuch() {
    AtomicInteger attempts = new AtomicInteger();
    long start = System.nanoTime();
    Duration waited =
        backoff.retry(
            () -> {
              attempts.incrementAndGet();
              return null;
            },
            busy -> true,
            w -> w);
    long tookMillis = (System.nanoTime() - start) / 1_000_000;

    assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(200));
    assertThat(tookMillis).isLessThan(1_000);
    // Doubling to a 16 ms cap: far fewer attempts than one per millisecond, far more than one.
    assertThat(attempts.get()).isBetween(8, 60);
  }

  @Test
  void onceMakesASingleAttempt() {
    AtomicInteger attempts = new AtomicInteger();
    String result =
        Backoff.ONCE.retry(
            () -> {
              attempts.incrementAndGet();
              return "busy";
            },
            "busy"::equals,
            waited -> "gave up");
    assertThat(result).isEqualTo("gave up");
    assertThat(attempts).hasValue(1);
  }

  @Test
  void rejectsNonsense() {
    assertThatThrownBy(
            () -> new Backoff(Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(1), 0.5))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> new Backoff(Duration.ofMillis(1), Duration.ofMillis(1), Duration.ofSeconds(1), 2))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
