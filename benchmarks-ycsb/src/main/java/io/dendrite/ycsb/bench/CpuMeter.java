package io.dendrite.ycsb.bench;

import io.dendrite.iq.bench.ProcCpu;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * Follows where the CPU of one measured run goes. At every YCSB status line it reads the counters of
 * the YCSB client JVM, of the run's cache servers, of the database server (found by the pid file
 * {@code dev/services} writes) and of the machine; at the end it gives the usage between the first
 * status line, which YCSB prints as it starts its workload threads, and the last one, which it prints
 * once they have finished and cleaned up. That is the window YCSB's own throughput is measured over, to
 * within a wake-up of its status thread, and the operations are counted by the same counter.
 *
 * <p>Samples are taken on the thread that reads YCSB's stderr, the usage on the runner's thread: the
 * methods are synchronized.
 */
final class CpuMeter {

  /** The status lines a run's usage is measured between, as they were handed to {@link #sample}. */
  record Window(YcsbOutputParser.Status first, YcsbOutputParser.Status last) {}

  private final String run;
  private final List<Long> cachePids;
  private final OptionalLong ticksPerSecond;
  private final Consumer<String> warn;

  /** Why a figure could not be read, by figure name; only the first reason is kept, for the warning. */
  private final Map<String, String> unreadable = new LinkedHashMap<>();

  private final OptionalLong databasePid;
  private OptionalLong clientPid = OptionalLong.empty();
  private CpuSample first;
  private CpuSample last;

  /**
   * @param run names the run in warnings
   * @param cachePids the cache server processes started for this run (none for the database alone)
   * @param ticksPerSecond the clock tick rate; when unknown only the machine's busy share is given
   * @param warn where to say which figure is left blank, and why
   */
  CpuMeter(
      String run,
      List<Long> cachePids,
      Database database,
      OptionalLong ticksPerSecond,
      Consumer<String> warn) {
    this.run = run;
    this.cachePids = List.copyOf(cachePids);
    this.ticksPerSecond = ticksPerSecond;
    this.warn = warn;
    this.databasePid = database.serverPidFile().map(this::pidIn).orElse(OptionalLong.empty());
  }

  /** The YCSB client JVM runs with this pid; called before its first status line. */
  synchronized void clientStarted(long pid) {
    clientPid = OptionalLong.of(pid);
  }

  /** Reads every counter now, as YCSB has just printed {@code status}. */
  synchronized void sample(YcsbOutputParser.Status status) {
    CpuSample sample =
        new CpuSample(
            status,
            ticks("client", clientPid),
            cacheTicks(),
            ticks("database", databasePid),
            machineTicks());
    if (first == null) {
      first = sample;
    } else if (sample.readsAtLeastWhat(first)) {
      // The client may be gone by the time its final line is read: the window then ends at the line
      // before.
      last = sample;
    }
  }

  /** The usage over the window, warning for each figure left blank; empty with fewer than two status lines. */
  synchronized Optional<CpuUsage> usage() {
    if (first == null || last == null) {
      warn.accept(
          "CPU figures n/a for "
              + run
              + ": YCSB printed fewer than two status lines to measure between");
      return Optional.empty();
    }
    CpuUsage usage = CpuUsage.between(first, last, ticksPerSecond);
    warnIfBlank("client", usage.clientMillis());
    warnIfBlank("cache", usage.cacheMillis());
    warnIfBlank("database", usage.databaseMillis());
    warnIfBlank("machine", usage.machineBusyPercent());
    return Optional.of(usage);
  }

  /** The window {@link #usage()} measures over, for other figures to be measured over it too. */
  synchronized Optional<Window> window() {
    return first == null || last == null
        ? Optional.empty()
        : Optional.of(new Window(first.status(), last.status()));
  }

  private void warnIfBlank(String figure, OptionalDouble value) {
    if (value.isEmpty() && unreadable.containsKey(figure)) {
      warn.accept("CPU " + figure + " figure n/a for " + run + ": " + unreadable.get(figure));
    }
  }

  /** Empty without a complaint when there is no such process (a database that runs inside the client). */
  private OptionalLong ticks(String figure, OptionalLong pid) {
    if (pid.isEmpty()) {
      return OptionalLong.empty();
    }
    OptionalLong ticks = ProcCpu.processTicks(pid.getAsLong());
    if (ticks.isEmpty()) {
      unreadable.putIfAbsent(figure, "cannot read /proc/" + pid.getAsLong() + "/stat");
    }
    return ticks;
  }

  /** The sum over the run's cache servers, or empty when any of them cannot be read: a part is no sum. */
  private OptionalLong cacheTicks() {
    long sum = 0;
    for (long pid : cachePids) {
      OptionalLong ticks = ticks("cache", OptionalLong.of(pid));
      if (ticks.isEmpty()) {
        return ticks;
      }
      sum += ticks.getAsLong();
    }
    return OptionalLong.of(sum);
  }

  private Optional<ProcCpu.MachineTicks> machineTicks() {
    Optional<ProcCpu.MachineTicks> ticks = ProcCpu.machineTicks();
    if (ticks.isEmpty()) {
      unreadable.putIfAbsent("machine", "cannot read /proc/stat");
    }
    return ticks;
  }

  private OptionalLong pidIn(Path pidFile) {
    try {
      return OptionalLong.of(Long.parseLong(Files.readString(pidFile).strip()));
    } catch (IOException | NumberFormatException e) {
      unreadable.put(
          "database",
          "no pid in "
              + pidFile.toAbsolutePath()
              + " (dev/services writes it under $DENDRITE_SERVICES_DIR, default target/services)");
      return OptionalLong.empty();
    }
  }
}
