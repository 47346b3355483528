package io.dendrite.ycsb.bench;

import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * Where the CPU of one measured run went: the CPU time of the YCSB client JVM, of the run's cache
 * servers together and of the database server over the run's window, the operations completed in that
 * window, and how busy the whole machine was meanwhile. A figure /proc could not give is empty, never
 * estimated.
 *
 * @param operations completed between the window's first and last YCSB status line
 * @param machineBusyPercent of all the machine's CPUs, including processes outside the run
 */
public record CpuUsage(
    long operations,
    OptionalDouble clientMillis,
    OptionalDouble cacheMillis,
    OptionalDouble databaseMillis,
    OptionalDouble machineBusyPercent) {

  /**
   * The usage between two samples of the same run.
   *
   * @param ticksPerSecond the clock tick rate; when unknown, no CPU time is given (machine busy still is,
   *     being a ratio of ticks)
   */
  static CpuUsage between(CpuSample first, CpuSample last, OptionalLong ticksPerSecond) {
    OptionalDouble busy = OptionalDouble.empty();
    if (first.machine().isPresent() && last.machine().isPresent()) {
      long total = last.machine().get().total() - first.machine().get().total();
      long busyTicks = last.machine().get().busy() - first.machine().get().busy();
      busy = total > 0 ? OptionalDouble.of(100.0 * busyTicks / total) : OptionalDouble.empty();
    }
    return new CpuUsage(
        last.status().operations() - first.status().operations(),
        millis(first.clientTicks(), last.clientTicks(), ticksPerSecond),
        millis(first.cacheTicks(), last.cacheTicks(), ticksPerSecond),
        millis(first.databaseTicks(), last.databaseTicks(), ticksPerSecond),
        busy);
  }

  private static OptionalDouble millis(
      OptionalLong from, OptionalLong to, OptionalLong ticksPerSecond) {
    if (from.isEmpty() || to.isEmpty() || ticksPerSecond.isEmpty()) {
      return OptionalDouble.empty();
    }
    return OptionalDouble.of(
        (to.getAsLong() - from.getAsLong()) * 1000.0 / ticksPerSecond.getAsLong());
  }

  /** Microseconds of client CPU per operation; empty when the CPU time is, or no operation completed. */
  public OptionalDouble clientMicrosPerOperation() {
    return perOperation(clientMillis);
  }

  /** As {@link #clientMicrosPerOperation()}, for the run's cache servers together. */
  public OptionalDouble cacheMicrosPerOperation() {
    return perOperation(cacheMillis);
  }

  /** As {@link #clientMicrosPerOperation()}, for the database server. */
  public OptionalDouble databaseMicrosPerOperation() {
    return perOperation(databaseMillis);
  }

  /** Client + cache + database; empty when any of the three is, as a partial sum would read as a total. */
  public OptionalDouble totalMicrosPerOperation() {
    if (clientMillis.isEmpty() || cacheMillis.isEmpty() || databaseMillis.isEmpty()) {
      return OptionalDouble.empty();
    }
    return perOperation(
        OptionalDouble.of(
            clientMillis.getAsDouble() + cacheMillis.getAsDouble() + databaseMillis.getAsDouble()));
  }

  private OptionalDouble perOperation(OptionalDouble millis) {
    return millis.isPresent() && operations > 0
        ? OptionalDouble.of(millis.getAsDouble() * 1000 / operations)
        : OptionalDouble.empty();
  }
}
