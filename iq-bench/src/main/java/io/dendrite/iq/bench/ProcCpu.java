package io.dendrite.iq.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * The benchmarks' one reader of Linux CPU counters (the IQ benchmarks' server CPU per request, {@code dev/bench}'s
 * CPU columns): a process's user + system time from {@code /proc/<pid>/stat} and the whole machine's busy and
 * total time from {@code /proc/stat}, both in clock ticks. Every reader answers empty where /proc cannot tell (not
 * Linux, the process is gone), so that a figure is left blank rather than guessed.
 */
public final class ProcCpu {

  /** Index of utime among the fields after the comm field's closing parenthesis (state is 0); stime follows. */
  private static final int UTIME_AFTER_COMM = 11;

  private ProcCpu() {}

  /**
   * Ticks the whole machine spent busy and in all, summed over its CPUs.
   *
   * @param busy everything but idle and iowait (iowait is a CPU with nothing to run)
   * @param total user, nice, system, idle, iowait, irq, softirq and steal (guest time is already in user)
   */
  public record MachineTicks(long busy, long total) {}

  /**
   * The process's user + system ticks. The kernel sums them over the process's threads, so one read
   * covers a JVM; the times of children it has reaped are not included.
   */
  public static OptionalLong processTicks(long pid) {
    return ticksIn(Path.of("/proc", String.valueOf(pid), "stat"));
  }

  /** The user + system ticks of one thread {@code tid} of process {@code pid}. */
  public static OptionalLong threadTicks(long pid, long tid) {
    return ticksIn(Path.of("/proc", String.valueOf(pid), "task", String.valueOf(tid), "stat"));
  }

  private static OptionalLong ticksIn(Path stat) {
    try {
      return OptionalLong.of(processTicks(Files.readString(stat)));
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
  }

  /** The machine's ticks from the aggregate {@code cpu} line of {@code /proc/stat}. */
  public static Optional<MachineTicks> machineTicks() {
    try {
      return Optional.of(machineTicks(Files.readString(Path.of("/proc/stat"))));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Clock ticks per second as {@code getconf CLK_TCK} prints them (Linux's USER_HZ, normally 100). */
  public static OptionalLong clockTicksPerSecond() {
    try {
      Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
      String out;
      try (InputStream in = getconf.getInputStream()) {
        out = new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip();
      }
      if (!getconf.waitFor(10, TimeUnit.SECONDS) || getconf.exitValue() != 0) {
        getconf.destroyForcibly();
        return OptionalLong.empty();
      }
      long ticks = Long.parseLong(out);
      return ticks > 0 ? OptionalLong.of(ticks) : OptionalLong.empty();
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return OptionalLong.empty();
    }
  }

  /**
   * utime + stime of one {@code /proc/<pid>/stat} text. The second field, the command name in
   * parentheses, may itself hold spaces and parentheses (a thread can name itself {@code "a) b ("}), so
   * the fields are counted from the last {@code ')'}.
   *
   * @throws IllegalArgumentException when the text is not shaped like {@code /proc/<pid>/stat}
   */
  static long processTicks(String stat) {
    int commEnd = stat.lastIndexOf(')');
    if (commEnd < 0) {
      throw new IllegalArgumentException(
          "no ')' closing the command name in /proc/<pid>/stat: " + stat);
    }
    String[] fields = stat.substring(commEnd + 1).strip().split("\\s+");
    if (fields.length <= UTIME_AFTER_COMM + 1) {
      throw new IllegalArgumentException(
          "too few fields after the command name in /proc/<pid>/stat: " + stat);
    }
    return Long.parseLong(fields[UTIME_AFTER_COMM]) + Long.parseLong(fields[UTIME_AFTER_COMM + 1]);
  }

  /**
   * The machine's ticks from {@code /proc/stat} text: its first line, {@code cpu user nice system idle
   * iowait irq softirq steal guest guest_nice}; older kernels print fewer columns.
   *
   * @throws IllegalArgumentException when the text has no aggregate {@code cpu} line
   */
  static MachineTicks machineTicks(String procStat) {
    String first = procStat.lines().findFirst().orElse("");
    String[] fields = first.strip().split("\\s+");
    if (!fields[0].equals("cpu") || fields.length < 5) {
      throw new IllegalArgumentException(
          "no aggregate cpu line at the top of /proc/stat: " + first);
    }
    long total = 0;
    for (int i = 1; i < Math.min(fields.length, 9); i++) { // user .. steal
      total += Long.parseLong(fields[i]);
    }
    long idle = Long.parseLong(fields[4]) + (fields.length > 5 ? Long.parseLong(fields[5]) : 0);
    return new MachineTicks(total - idle, total);
  }
}
