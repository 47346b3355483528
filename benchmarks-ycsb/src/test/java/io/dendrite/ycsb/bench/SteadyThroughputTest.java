package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.dendrite.ycsb.bench.YcsbOutputParser.Status;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SteadyThroughputTest {

  /** A 60 s run with status every 10 s as YCSB printed it, slow while the JVM and the cache warm up. */
  private static final List<Status> SIXTY_SECONDS =
      List.of(
          new Status(0, 0, 0),
          new Status(10, 3_819, 381.9),
          new Status(20, 14_563, 1_074.4),
          new Status(30, 27_797, 1_323.4),
          new Status(40, 40_325, 1_252.8),
          new Status(50, 51_756, 1_143.1),
          new Status(60, 64_365, 1_260.9));

  @Test
  void countsTheOperationsFromTheFirstStatusInTheSecondHalfToTheLast() {
    assertThat(SteadyThroughput.of(SIXTY_SECONDS, 60).getAsDouble())
        .isCloseTo((64_365 - 27_797) / 30.0, within(1e-9));
  }

  @Test
  void theLineYcsbPrintsAtShutdownInTheSameSecondDoesNotCount() {
    List<Status> withShutdownLine = new ArrayList<>(SIXTY_SECONDS);
    withShutdownLine.add(new Status(60, 64_373, 50));

    assertThat(SteadyThroughput.of(withShutdownLine, 60))
        .isEqualTo(SteadyThroughput.of(SIXTY_SECONDS, 60));
  }

  @Test
  void aShutdownLinePastTheRunDoesNotCount() {
    List<Status> withSlowCleanup = new ArrayList<>(SIXTY_SECONDS);
    withSlowCleanup.add(new Status(63, 64_400, 11));

    assertThat(SteadyThroughput.of(withSlowCleanup, 60))
        .isEqualTo(SteadyThroughput.of(SIXTY_SECONDS, 60));
  }

  @Test
  void fewerThanTwoStatusesInTheSecondHalfHaveNoSteadyFigure() {
    // 10 s in 10 s steps: the second half holds the status at 10 s and the shutdown line in the
    // same second.
    List<Status> tenSeconds =
        List.of(
            new Status(0, 0, 0), new Status(10, 36_315, 3_631.5), new Status(10, 36_334, 143.94));
    // 3 s with the default 10 s interval: the start and the shutdown line only.
    List<Status> threeSeconds = List.of(new Status(0, 0, 0), new Status(3, 9_000, 3_000));

    assertThat(SteadyThroughput.of(tenSeconds, 10)).isEmpty();
    assertThat(SteadyThroughput.of(threeSeconds, 3)).isEmpty();
    assertThat(SteadyThroughput.of(List.of(), 60)).isEmpty();
  }

  @Test
  void anIntervalThatDoesNotDivideTheRunUsesTheCounterNotTheRate() {
    // 25 s in 10 s steps: the second half starts at 20 s; the shutdown line at 25 s is the run's
    // last status and its counter is right, although its rate is over 5 s only.
    List<Status> twentyFiveSeconds =
        List.of(
            new Status(0, 0, 0),
            new Status(10, 10_000, 1_000),
            new Status(20, 30_000, 2_000),
            new Status(25, 40_000, 2_000));

    assertThat(SteadyThroughput.of(twentyFiveSeconds, 25).getAsDouble())
        .isCloseTo(10_000 / 5.0, within(1e-9));
  }

  @Test
  void theSecondHalfOfAnOddLengthStartsPastItsMiddle() {
    // 15 s in 7 s steps: 7 s is before the middle (7.5 s), which halving in whole seconds would
    // miss.
    List<Status> fifteenSeconds =
        List.of(
            new Status(0, 0, 0),
            new Status(7, 700, 100),
            new Status(14, 2_100, 200),
            new Status(15, 2_400, 300));

    assertThat(SteadyThroughput.of(fifteenSeconds, 15).getAsDouble())
        .isCloseTo(300.0, within(1e-9));
  }
}
