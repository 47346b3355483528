package io.dendrite.ycsb.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;

/** A run with its throughput relative to the database alone on the same workload in the same invocation. */
public record ReportRow(RunResult result, OptionalDouble ratioToDatabaseAlone) {

    /**
     * Pairs every run with the ratio of its throughput to that of the database-alone configuration of
     * the same database on the same workload; empty when that run is missing or had no throughput.
     */
    public static List<ReportRow> of(List<RunResult> results) {
        List<ReportRow> rows = new ArrayList<>();
        for (RunResult r : results) {
            OptionalDouble ratio = results.stream()
                    .filter(b -> b.configuration().databaseAlone()
                            && b.configuration().database().name().equals(r.configuration().database().name())
                            && b.workload().name().equals(r.workload().name())
                            && b.ycsb().throughput() > 0)
                    .mapToDouble(b -> r.ycsb().throughput() / b.ycsb().throughput())
                    .findFirst();
            rows.add(new ReportRow(r, ratio));
        }
        return rows;
    }

    /** The CPR paper's "% improvement": (ratio − 1) × 100. */
    public OptionalDouble improvementPercent() {
        return ratioToDatabaseAlone.isPresent()
                ? OptionalDouble.of((ratioToDatabaseAlone.getAsDouble() - 1) * 100) : OptionalDouble.empty();
    }
}
