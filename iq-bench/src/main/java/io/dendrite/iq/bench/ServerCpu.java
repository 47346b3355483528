package io.dendrite.iq.bench;

import io.dendrite.iq.client.ServerAddress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * The CPU time a server process spends per request it serves: user + system clock ticks from Linux's
 * {@code /proc/<pid>/stat} (fields 14 and 15, summed by the kernel over the process's threads) read before and
 * after a measured phase, divided by the requests completed in it. Where there is no process to read (a server
 * inside this JVM, an unknown pid, no /proc) the figure is missing with the reason, never estimated.
 */
final class ServerCpu {

  /** utime's index among the fields after the command name's closing parenthesis (state is 0); stime follows. */
  private static final int UTIME_AFTER_COMM = 11;

  private final long pid;
  private final long ticksPerSecond;
  private final String missing;

  private ServerCpu(long pid, long ticksPerSecond, String missing) {
    this.pid = pid;
    this.ticksPerSecond = ticksPerSecond;
    this.missing = missing;
  }

  /** The process {@code pid}; missing, with the reason, when its /proc stat or the clock rate cannot be read. */
  static ServerCpu ofProcess(long pid) {
    try {
      ticksOfProcess(pid);
    } catch (IOException | RuntimeException e) {
      return missing(unreadable(pid, e));
    }
    long ticksPerSecond = clockTicksPerSecond();
    return ticksPerSecond > 0
        ? new ServerCpu(pid, ticksPerSecond, null)
        : missing("`getconf CLK_TCK` gave no clock rate");
  }

  /** No figure for this server, for the given reason. */
  static ServerCpu missing(String reason) {
    return new ServerCpu(-1, 0, reason);
  }

  /**
   * The memcached at {@code address}: the pid given, else the one in the pid file {@code dev/services} writes
   * ({@code $DENDRITE_SERVICES_DIR/memcached/memcached.pid}, default {@code target/services}), used only if that
   * process is a memcached listening on the address's port.
   */
  static ServerCpu memcached(Long pid, ServerAddress address) {
    if (pid != null) {
      return ofProcess(pid);
    }
    String servicesDir = System.getenv("DENDRITE_SERVICES_DIR");
    Path pidFile =
        Path.of(
            servicesDir != null ? servicesDir : "target/services", "memcached", "memcached.pid");
    long filePid;
    List<String> command;
    try {
      filePid = Long.parseLong(Files.readString(pidFile).strip());
      command =
          Arrays.asList(
              Files.readString(Path.of("/proc", String.valueOf(filePid), "cmdline")).split("\0"));
    } catch (IOException | RuntimeException e) {
      return missing(
          "no --memcached-pid, and no running memcached named by "
              + pidFile.toAbsolutePath()
              + " ("
              + e
              + ")");
    }
    OptionalInt port = memcachedPort(command);
    if (port.isEmpty() || port.getAsInt() != address.port()) {
      return missing(
          "the pid file "
              + pidFile.toAbsolutePath()
              + " names pid "
              + filePid
              + " ("
              + String.join(" ", command)
              + "), not a memcached on port "
              + address.port()
              + "; give --memcached-pid");
    }
    return ofProcess(filePid);
  }

  /** The process read, or -1 when there is no figure. */
  long pid() {
    return missing == null ? pid : -1;
  }

  /** The measured phase starts now. */
  Phase begin() {
    if (missing != null) {
      return requests -> CpuPerRequest.missing(missing);
    }
    long before;
    try {
      before = ticksOfProcess(pid);
    } catch (IOException | RuntimeException e) {
      return requests -> CpuPerRequest.missing(unreadable(pid, e));
    }
    return requests -> {
      try {
        return CpuPerRequest.of(ticksOfProcess(pid) - before, ticksPerSecond, requests);
      } catch (IOException | RuntimeException e) {
        return CpuPerRequest.missing(unreadable(pid, e));
      }
    };
  }

  private static String unreadable(long pid, Exception e) {
    return "cannot read /proc/" + pid + "/stat (" + e + ")";
  }

  /** A phase in progress. */
  interface Phase {
    /** Ends the phase, in which {@code requests} requests completed. */
    CpuPerRequest end(long requests);
  }

  /**
   * CPU microseconds per request, or why there is none.
   *
   * @param micros the figure, NaN when missing
   * @param missing the reason there is no figure, null when there is one
   */
  record CpuPerRequest(double micros, String missing) {

    static CpuPerRequest of(long ticks, long ticksPerSecond, long requests) {
      if (requests <= 0) {
        return missing("no request completed");
      }
      return new CpuPerRequest(ticks * 1e6 / ticksPerSecond / requests, null);
    }

    static CpuPerRequest missing(String reason) {
      return new CpuPerRequest(Double.NaN, reason);
    }

    /** The figure with one decimal, or "–". */
    String format() {
      return missing == null ? String.format(Locale.ROOT, "%.1f", micros) : "–";
    }
  }

  /** utime + stime of the process. */
  static long ticksOfProcess(long pid) throws IOException {
    return ticksOfStat(Files.readString(Path.of("/proc", String.valueOf(pid), "stat")));
  }

  /**
   * utime + stime from the text of {@code /proc/<pid>/stat}. The command name, the second field, is in
   * parentheses and may itself hold spaces and parentheses, so the fields are counted from the last ')'.
   *
   * @throws IllegalArgumentException when the text is not shaped like {@code /proc/<pid>/stat}
   */
  static long ticksOfStat(String stat) {
    int commEnd = stat.lastIndexOf(')');
    String[] fields = stat.substring(commEnd + 1).strip().split("\\s+");
    if (commEnd < 0 || fields.length <= UTIME_AFTER_COMM + 1) {
      throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + stat);
    }
    return Long.parseLong(fields[UTIME_AFTER_COMM]) + Long.parseLong(fields[UTIME_AFTER_COMM + 1]);
  }

  /**
   * The port a memcached command line listens on ({@code -p N}, {@code -pN}, {@code --port=N} or
   * {@code --port N}; 11211 without one), or empty if the command is not memcached's.
   */
  static OptionalInt memcachedPort(List<String> command) {
    if (command.isEmpty()
        || !Path.of(command.get(0)).getFileName().toString().equals("memcached")) {
      return OptionalInt.empty();
    }
    int port = 11211;
    for (int i = 1; i < command.size(); i++) {
      String arg = command.get(i);
      String value =
          arg.equals("-p") || arg.equals("--port")
              ? (i + 1 < command.size() ? command.get(++i) : "")
              : arg.startsWith("--port=")
                  ? arg.substring("--port=".length())
                  : arg.startsWith("-p") ? arg.substring(2) : null;
      if (value != null) {
        try {
          port = Integer.parseInt(value);
        } catch (NumberFormatException e) {
          return OptionalInt.empty();
        }
      }
    }
    return OptionalInt.of(port);
  }

  /** Clock ticks per second as {@code getconf CLK_TCK} prints them (normally 100), or 0 when it cannot tell. */
  private static long clockTicksPerSecond() {
    try {
      Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
      String out =
          new String(getconf.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip();
      return getconf.waitFor() == 0 ? Long.parseLong(out) : 0;
    } catch (IOException | NumberFormatException e) {
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
  }
}
