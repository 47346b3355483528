package io.dendrite.ycsb.bench;

import io.dendrite.iq.bench.ProcCpu;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The CPU counters read when YCSB printed one status line of a measured run, in clock ticks since each
 * process started (or the machine booted); a counter /proc could not give is empty.
 *
 * @param cacheTicks summed over every cache server process of the run; 0 when the run started none
 */
record CpuSample(
    YcsbOutputParser.Status status,
    OptionalLong clientTicks,
    OptionalLong cacheTicks,
    OptionalLong databaseTicks,
    Optional<ProcCpu.MachineTicks> machine) {

  /** Whether this sample has every counter {@code other} has, so that a window between them loses none. */
  boolean readsAtLeastWhat(CpuSample other) {
    return (clientTicks.isPresent() || other.clientTicks.isEmpty())
        && (cacheTicks.isPresent() || other.cacheTicks.isEmpty())
        && (databaseTicks.isPresent() || other.databaseTicks.isEmpty())
        && (machine.isPresent() || other.machine.isEmpty());
  }
}
