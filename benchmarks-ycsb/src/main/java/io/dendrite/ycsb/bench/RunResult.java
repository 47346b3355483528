package io.dendrite.ycsb.bench;

import java.util.List;
import java.util.Optional;

/**
 * One measured run of a configuration on a workload: what YCSB printed, what the binding counted
 * (absent when the binding writes no stats file, as YCSB's {@code BasicDB}), and the pinned memory polled
 * during it (empty unless write-back).
 */
public record RunResult(Configuration configuration, Workload workload, int threads, long records, int seconds,
                        YcsbResult ycsb, Optional<BindingStats> stats, List<PinnedSample> pinned, String rawOutput) {

    public RunResult {
        pinned = List.copyOf(pinned);
    }

    public long peakPinnedBytes() {
        return pinned.stream().mapToLong(PinnedSample::pinnedBytes).max().orElse(0);
    }
}
