package io.dendrite.ycsb.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.function.Function;

/**
 * A run with its throughput relative to the database alone on the same workload in the same regime of the same
 * invocation, over the whole run and over its second half (steady).
 */
public record ReportRow(
    RunResult result,
    OptionalDouble ratioToDatabaseAlone,
    OptionalDouble steadyRatioToDatabaseAlone) {

  /**
   * Pairs every run with the ratios of its throughputs to those of the database-alone configuration of the same
   * database on the same workload in the same regime (shared, or the database capped at as many cores); each is
   * empty when that run is missing or had no such figure.
   */
  public static List<ReportRow> of(List<RunResult> results) {
    List<ReportRow> rows = new ArrayList<>();
    for (RunResult r : results) {
      rows.add(
          new ReportRow(
              r,
              ratio(results, r, b -> OptionalDouble.of(b.ycsb().throughput())),
              ratio(results, r, RunResult::steadyThroughput)));
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
                    && b.workload().name().equals(r.workload().name())
                    && b.regime().equals(r.regime()))
        .map(throughput)
        .filter(alone -> alone.isPresent() && alone.getAsDouble() > 0)
        .mapToDouble(alone -> mine.getAsDouble() / alone.getAsDouble())
        .findFirst();
  }

  /** The CPR paper's "% improvement": (ratio − 1) × 100. */
  public OptionalDouble improvementPercent() {
    return ratioToDatabaseAlone.isPresent()
        ? OptionalDouble.of((ratioToDatabaseAlone.getAsDouble() - 1) * 100)
        : OptionalDouble.empty();
  }
}
