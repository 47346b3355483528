package io.dendrite.ycsb.bench;

import io.dendrite.ycsb.bench.YcsbOutputParser.Status;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * One measured run with the database cut in the middle: its status lines, split into the three phases, when the
 * runner cut and restored the database, YCSB's final counts, and the binding's outage stats.
 *
 * @param runSeconds the run's configured length: later status lines are YCSB waiting for the binding's cleanup
 * @param startedAt when the workload started (the first status line reached the runner); empty if it never did
 */
public record OutageRun(
    Configuration configuration,
    Workload workload,
    Outage outage,
    int runSeconds,
    List<Status> statuses,
    OptionalLong startedAt,
    OptionalLong cutAt,
    OptionalLong restoredAt,
    YcsbResult ycsb,
    Optional<OutageStats> stats) {

  /** The three parts of the run. */
  public enum Phase {
    BEFORE,
    DURING,
    AFTER
  }

  public OutageRun {
    Objects.requireNonNull(configuration, "configuration");
    statuses = List.copyOf(statuses);
  }

  /**
   * Operations that succeeded per second in the phase, from the per-interval counts of the status lines that end
   * in it; empty when no status line does (the run printed no counts, or its status interval is longer than the
   * phase).
   */
  public OptionalDouble successesPerSecond(Phase phase) {
    long[] window = window(phase);
    long sum = 0;
    boolean any = false;
    for (Status s : statuses) {
      if (s.elapsedSeconds() > window[0] && s.elapsedSeconds() <= window[1]) {
        any = true;
        sum +=
            s.intervalCounts().entrySet().stream()
                .filter(e -> !e.getKey().endsWith("-FAILED"))
                .mapToLong(e -> e.getValue())
                .sum();
      }
    }
    return any && window[1] > window[0]
        ? OptionalDouble.of((double) sum / (window[1] - window[0]))
        : OptionalDouble.empty();
  }

  /** Operations of this type ({@code READ}, {@code UPDATE}, ...) that failed in the phase. */
  public long failures(String operation, Phase phase) {
    long[] window = window(phase);
    return statuses.stream()
        .filter(s -> s.elapsedSeconds() > window[0] && s.elapsedSeconds() <= window[1])
        .mapToLong(s -> s.intervalCounts().getOrDefault(operation + "-FAILED", 0L))
        .sum();
  }

  /** Operations of this type that failed over the whole run, by YCSB's final count of return codes. */
  public long failures(String operation) {
    YcsbResult.OperationStats stats = ycsb.operations().get(operation);
    return stats == null ? 0 : stats.failed();
  }

  /** Operations of this type that returned OK over the whole run: for an update, an acknowledged write. */
  public long successes(String operation) {
    YcsbResult.OperationStats stats = ycsb.operations().get(operation);
    return stats == null ? 0 : stats.returns().getOrDefault("OK", 0L);
  }

  /**
   * Seconds from the restore until TARDIS was back in normal mode with nothing buffered; empty for a configuration
   * that buffers nothing, or when the run never got there.
   */
  public OptionalDouble recoverySeconds() {
    if (restoredAt.isEmpty() || stats.isEmpty() || stats.get().normalAt().isEmpty()) {
      return OptionalDouble.empty();
    }
    return OptionalDouble.of((stats.get().normalAt().getAsLong() - restoredAt.getAsLong()) / 1e3);
  }

  /** The phase's seconds into the run, (from, to]. */
  private long[] window(Phase phase) {
    return switch (phase) {
      case BEFORE -> new long[] {0, outage.atSeconds()};
      case DURING -> new long[] {outage.atSeconds(), outage.endSeconds()};
      case AFTER -> new long[] {outage.endSeconds(), runSeconds};
    };
  }
}
