package io.dendrite.iq.bench;

import io.dendrite.iq.client.ServerAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The CPU time a server process spends per request it serves: its user + system clock ticks ({@link ProcCpu})
 * read before and after a measured phase, divided by the requests completed in it. Where there is no process to
 * read (a server inside this JVM, an unknown pid, no /proc) the figure is missing with the reason, never
 * estimated.
 */
final class ServerCpu {

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
    if (ProcCpu.processTicks(pid).isEmpty()) {
      return missing(unreadable(pid));
    }
    OptionalLong ticksPerSecond = ProcCpu.clockTicksPerSecond();
    return ticksPerSecond.isPresent()
        ? new ServerCpu(pid, ticksPerSecond.getAsLong(), null)
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
    OptionalLong before = ProcCpu.processTicks(pid);
    if (before.isEmpty()) {
      return requests -> CpuPerRequest.missing(unreadable(pid));
    }
    return requests -> {
      OptionalLong after = ProcCpu.processTicks(pid);
      return after.isPresent()
          ? CpuPerRequest.of(after.getAsLong() - before.getAsLong(), ticksPerSecond, requests)
          : CpuPerRequest.missing(unreadable(pid));
    };
  }

  private static String unreadable(long pid) {
    return "cannot read /proc/" + pid + "/stat (the process is gone, or this is not Linux)";
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
}
