package io.dendrite.ycsb.bench;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * One measured run of a configuration on a workload: what YCSB printed (its final measurements and the
 * {@code -s} status lines), what the binding counted (absent when the binding writes no stats file, as
 * YCSB's {@code BasicDB}), the pinned memory polled during it (empty unless write-back), where its CPU
 * went (absent when it printed too few status lines to measure between) and the database server's work over
 * the same window by its own counters (absent when it keeps none or they could not be read).
 *
 * @param regime the CPU the database server had: shared, or capped ({@code dev/bench --db-cpus})
 */
public record RunResult(
    Configuration configuration,
    Workload workload,
    int threads,
    long records,
    int seconds,
    Regime regime,
    YcsbResult ycsb,
    Optional<BindingStats> stats,
    List<PinnedSample> pinned,
    List<YcsbOutputParser.Status> statuses,
    Optional<CpuUsage> cpu,
    Optional<DatabaseWork> databaseWork,
    String rawOutput) {

  public RunResult {
    java.util.Objects.requireNonNull(regime, "regime");
    pinned = List.copyOf(pinned);
    statuses = List.copyOf(statuses);
  }

  public long peakPinnedBytes() {
    return pinned.stream().mapToLong(PinnedSample::pinnedBytes).max().orElse(0);
  }

  /** Operations/s over the second half of the run; empty when the run was too short for its status lines. */
  public OptionalDouble steadyThroughput() {
    return SteadyThroughput.of(statuses, seconds);
  }
}
