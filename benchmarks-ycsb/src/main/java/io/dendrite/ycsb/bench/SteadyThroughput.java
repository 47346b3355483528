package io.dendrite.ycsb.bench;

import io.dendrite.ycsb.bench.YcsbOutputParser.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;

/**
 * Throughput over the second half of a run, from YCSB's {@code -s} status lines. Every measured run is a
 * fresh JVM starting on a cold cache, so the whole-run figure includes JIT warm-up; the second half is
 * closer to what the configuration sustains.
 */
public final class SteadyThroughput {

  private SteadyThroughput() {}

  /**
   * Operations completed between the first status at or after half the run and the last one within it,
   * divided by the seconds between the two. Uses the cumulative operation counter, not YCSB's per-interval
   * rate, so an interval that does not divide the run evenly is still counted exactly.
   *
   * <p>YCSB prints one more status line when the workload threads have finished: a fraction of a second
   * after the last regular one, it is stamped with the same whole second (or a later one when cleanup is
   * slow) and counts operations completed after that mark. A status whose second was already seen is
   * therefore dropped, as is one past the run's length.
   *
   * @param statuses in the order YCSB printed them
   * @param runSeconds the run's configured length ({@code maxexecutiontime})
   * @return empty when fewer than two statuses fall in the second half: a run too short for its status
   *     interval has no steady figure
   */
  public static OptionalDouble of(List<Status> statuses, int runSeconds) {
    List<Status> secondHalf = new ArrayList<>();
    long lastSecond = -1;
    for (Status s : statuses) {
      boolean sameSecondAgain = s.elapsedSeconds() == lastSecond;
      lastSecond = s.elapsedSeconds();
      if (!sameSecondAgain
          && 2 * s.elapsedSeconds() >= runSeconds
          && s.elapsedSeconds() <= runSeconds) {
        secondHalf.add(s);
      }
    }
    if (secondHalf.size() < 2) {
      return OptionalDouble.empty();
    }
    Status first = secondHalf.get(0);
    Status last = secondHalf.get(secondHalf.size() - 1);
    return OptionalDouble.of(
        (double) (last.operations() - first.operations())
            / (last.elapsedSeconds() - first.elapsedSeconds()));
  }
}
