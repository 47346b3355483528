package io.dendrite.ycsb.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.function.Function;

/**
 * A run with its throughput relative to the database alone on the same workload in the same invocation,
 * over the whole run and over its second half (steady), and the database-bound projection.
 *
 * @param databaseBoundProjection the database alone's database CPU per operation ÷ this run's: the throughput
 *     ratio to expect if the database, on a server of its own, were the bottleneck while clients and cache
 *     servers scale out, as in the CPR paper. A projection from CPU per operation, not a measured throughput.
 */
public record ReportRow(
    RunResult result,
    OptionalDouble ratioToDatabaseAlone,
    OptionalDouble steadyRatioToDatabaseAlone,
    OptionalDouble databaseBoundProjection) {

  /**
   * Pairs every run with the ratios of its throughputs, and of the operations its database server could
   * serve per second of CPU, to those of the database-alone configuration of the same database on the same
   * workload; each is empty when that run is missing or had no such figure.
   */
  public static List<ReportRow> of(List<RunResult> results) {
    List<ReportRow> rows = new ArrayList<>();
    for (RunResult r : results) {
      rows.add(
          new ReportRow(
              r,
              ratio(results, r, b -> OptionalDouble.of(b.ycsb().throughput())),
              ratio(results, r, RunResult::steadyThroughput),
              ratio(results, r, ReportRow::operationsPerDatabaseCpuSecond)));
    }
    return rows;
  }

  private static OptionalDouble ratio(
      List<RunResult> results, RunResult r, Function<RunResult, OptionalDouble> throughput) {
    OptionalDouble mine = throughput.apply(r);
    if (mine.isEmpty()) {
      return OptionalDouble.empty();
    }
    return results.stream()
        .filter(
            b ->
                b.configuration().databaseAlone()
                    && b.configuration()
                        .database()
                        .name()
                        .equals(r.configuration().database().name())
                    && b.workload().name().equals(r.workload().name()))
        .map(throughput)
        .filter(alone -> alone.isPresent() && alone.getAsDouble() > 0)
        .mapToDouble(alone -> mine.getAsDouble() / alone.getAsDouble())
        .findFirst();
  }

  /**
   * The throughput the database server would allow with a core of its own: 10⁶ ÷ its CPU µs per operation.
   * Empty when that CPU figure is missing or zero.
   */
  private static OptionalDouble operationsPerDatabaseCpuSecond(RunResult r) {
    OptionalDouble micros =
        r.cpu().map(CpuUsage::databaseMicrosPerOperation).orElse(OptionalDouble.empty());
    return micros.isPresent() && micros.getAsDouble() > 0
        ? OptionalDouble.of(1e6 / micros.getAsDouble())
        : OptionalDouble.empty();
  }

  /** The CPR paper's "% improvement": (ratio − 1) × 100. */
  public OptionalDouble improvementPercent() {
    return ratioToDatabaseAlone.isPresent()
        ? OptionalDouble.of((ratioToDatabaseAlone.getAsDouble() - 1) * 100)
        : OptionalDouble.empty();
  }
}
