package io.dendrite.ycsb.bench;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * {@code dev/bench --db-cpus F}: moves the database servers into the cgroup {@code dev/bench} made for them with a
 * CPU quota of F cores, and back out. {@code dev/bench} creates the group and sets its quota (cgroup v2 {@code
 * cpu.max} or v1 {@code cpu.cfs_quota_us}) before the benchmark starts, names it in {@code DENDRITE_DB_CGROUP} and
 * the hierarchy's root in {@code DENDRITE_DB_CGROUP_ROOT}, and on exit moves whatever is still in the group back to
 * the root and removes it; this class only writes pids to the two {@code cgroup.procs} files, between the shared
 * regime's runs and the capped regime's.
 *
 * @param cpus the quota in cores
 * @param group the cgroup's directory (it holds {@code cgroup.procs}, {@code cpu.stat} and the quota's files)
 * @param root the root of its hierarchy, where the servers run otherwise
 */
public record DatabaseCpuCap(double cpus, Path group, Path root) {

  static final String GROUP_ENV = "DENDRITE_DB_CGROUP";
  static final String ROOT_ENV = "DENDRITE_DB_CGROUP_ROOT";

  private static final Pattern DECIMAL = Pattern.compile("[0-9]+(\\.[0-9]*)?|\\.[0-9]+");

  public DatabaseCpuCap {
    if (!(cpus > 0)) {
      throw new IllegalArgumentException("a database CPU quota must be positive: " + cpus);
    }
  }

  /**
   * The cores {@code --db-cpus} gives: a positive decimal such as {@code 0.25}, {@code 1} or {@code 1.5}.
   *
   * @throws IllegalArgumentException naming the value, for 0, a negative number or anything else
   */
  static double parseCpus(String value) {
    String v = value == null ? "" : value.strip();
    if (!DECIMAL.matcher(v).matches() || new BigDecimal(v).signum() <= 0) {
      throw new IllegalArgumentException(
          "--db-cpus needs a positive number of cores (a decimal such as 0.25, 1 or 1.5), got '"
              + value
              + "'");
    }
    return Double.parseDouble(v);
  }

  /** The group {@code dev/bench} made, as it names it in the environment. */
  static DatabaseCpuCap fromEnvironment(double cpus, Map<String, String> env) {
    String group = env.get(GROUP_ENV);
    String root = env.get(ROOT_ENV);
    if (group == null || group.isBlank() || root == null || root.isBlank()) {
      throw new IllegalArgumentException(
          "--db-cpus needs the cgroup dev/bench creates ("
              + GROUP_ENV
              + " and "
              + ROOT_ENV
              + " are not set): run it through dev/bench --db-cpus "
              + format(cpus));
    }
    return new DatabaseCpuCap(cpus, Path.of(group), Path.of(root));
  }

  /** Cores without trailing zeros: 0.25, 1, 1.5. */
  static String format(double cpus) {
    return BigDecimal.valueOf(cpus).stripTrailingZeros().toPlainString();
  }

  /**
   * The server processes of {@code databases} by their {@code dev/services} pid files, each once.
   *
   * @throws IOException when a database has no server process of its own, or its pid file is missing or names
   *     no running process: the cap would then not hold the database the runs talk to
   */
  static List<Long> serverPids(List<Database> databases) throws IOException {
    Map<String, Long> pids = new LinkedHashMap<>();
    for (Database db : databases) {
      if (pids.containsKey(db.name())) {
        continue;
      }
      Path file =
          db.serverPidFile()
              .orElseThrow(
                  () ->
                      new IOException(
                          "--db-cpus: " + db.name() + " has no server process of its own to cap"));
      long pid;
      try {
        pid = Long.parseLong(Files.readString(file).strip());
      } catch (NoSuchFileException e) {
        throw new IOException(
            "--db-cpus: no pid file "
                + file.toAbsolutePath()
                + " for the "
                + db.name()
                + " server; it comes from dev/services start (set DENDRITE_SERVICES_DIR to the"
                + " target/services of the checkout that started the servers)",
            e);
      } catch (NumberFormatException e) {
        throw new IOException("--db-cpus: no pid in " + file.toAbsolutePath(), e);
      }
      if (!ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
        throw new IOException(
            "--db-cpus: the "
                + db.name()
                + " server's pid file "
                + file.toAbsolutePath()
                + " names "
                + pid
                + ", which is not running");
      }
      pids.put(db.name(), pid);
    }
    return List.copyOf(pids.values());
  }

  /** Moves {@code pids} (every thread of each) into the group and checks that the group lists them. */
  void attach(List<Long> pids) throws IOException {
    Path procs = group.resolve("cgroup.procs");
    for (long pid : pids) {
      write(procs, pid);
      if (!Files.readAllLines(procs).stream()
          .map(String::strip)
          .toList()
          .contains(Long.toString(pid))) {
        throw new IOException(
            "--db-cpus: wrote " + pid + " to " + procs + " but the group does not list it");
      }
    }
  }

  /** Moves {@code pids} back to the root of the hierarchy; tries every one before it throws. */
  void detach(List<Long> pids) throws IOException {
    IOException first = null;
    for (long pid : pids) {
      try {
        write(root.resolve("cgroup.procs"), pid);
      } catch (IOException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private static void write(Path procs, long pid) throws IOException {
    try {
      // One pid per write(2), no truncation or creation: a cgroup file takes each write as a
      // command.
      Files.writeString(procs, pid + "\n", StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new IOException("--db-cpus: cannot move pid " + pid + " into " + procs + ": " + e, e);
    }
  }

  /**
   * The quota as the kernel holds it, for the report: {@code cpu.max 25000 100000} (cgroup v2) or {@code
   * cpu.cfs_quota_us 25000 / cpu.cfs_period_us 100000} (v1).
   */
  String describe() {
    Optional<String> max = read(group.resolve("cpu.max"));
    if (max.isPresent()) {
      return "cgroup v2 " + group + ", cpu.max " + max.get();
    }
    return "cgroup v1 "
        + group
        + ", cpu.cfs_quota_us "
        + read(group.resolve("cpu.cfs_quota_us")).orElse("?")
        + " / cpu.cfs_period_us "
        + read(group.resolve("cpu.cfs_period_us")).orElse("?");
  }

  /** The group's {@code cpu.stat} counts: scheduler periods, those in which it was throttled, time throttled. */
  record Throttling(long periods, long throttledPeriods, double throttledSeconds) {

    Throttling since(Throttling before) {
      return new Throttling(
          periods - before.periods,
          throttledPeriods - before.throttledPeriods,
          throttledSeconds - before.throttledSeconds);
    }

    String describe() {
      return String.format(
          Locale.ROOT,
          "throttled in %d of %d periods (%.1f s)",
          throttledPeriods,
          periods,
          throttledSeconds);
    }
  }

  /** The group's {@code cpu.stat} now (v1 counts throttled time in ns, v2 in µs); empty when unreadable. */
  Optional<Throttling> throttling() {
    Map<String, Long> stat = new LinkedHashMap<>();
    for (String line :
        read(group.resolve("cpu.stat")).map(s -> s.split("\n")).orElse(new String[0])) {
      String[] kv = line.strip().split("\\s+");
      if (kv.length == 2) {
        try {
          stat.put(kv[0], Long.parseLong(kv[1]));
        } catch (NumberFormatException ignored) {
          // not a count
        }
      }
    }
    if (!stat.containsKey("nr_periods") || !stat.containsKey("nr_throttled")) {
      return Optional.empty();
    }
    double throttled =
        stat.containsKey("throttled_usec")
            ? stat.get("throttled_usec") / 1e6
            : stat.getOrDefault("throttled_time", 0L) / 1e9;
    return Optional.of(new Throttling(stat.get("nr_periods"), stat.get("nr_throttled"), throttled));
  }

  private static Optional<String> read(Path file) {
    try {
      return Optional.of(Files.readString(file).strip());
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
