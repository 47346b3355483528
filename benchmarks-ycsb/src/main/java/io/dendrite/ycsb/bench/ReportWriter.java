package io.dendrite.ycsb.bench;

import io.dendrite.ycsb.bench.YcsbResult.OperationStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.stream.Collectors;

/** Writes the runs of one invocation as {@code results.csv} and {@code report.md}. */
public final class ReportWriter {

  private ReportWriter() {}

  /**
   * One line per run; every operation type gets its columns in every line, so the file is rectangular. {@code
   * db_cpus} is the database's CPU quota in cores ({@code dev/bench --db-cpus}), empty when it shared the machine;
   * the ratios divide by the database alone in the same regime.
   */
  public static void writeCsv(List<ReportRow> rows, Path file) throws IOException {
    List<String> header =
        new ArrayList<>(
            List.of(
                "config",
                "database",
                "policy",
                "workload",
                "scan_percent",
                "threads",
                "records",
                "seconds",
                "db_cpus",
                "throughput_ops_per_s",
                "ratio_to_db_alone",
                "steady_ops_per_s",
                "steady_ratio_to_db_alone"));
    for (String op : BindingStats.OPERATION_TYPES) {
      String p = op.toLowerCase(Locale.ROOT);
      header.addAll(
          List.of(
              p + "_count",
              p + "_avg_us",
              p + "_p95_us",
              p + "_p99_us",
              p + "_cache_trips_per_op",
              p + "_cache_awaited_per_op",
              p + "_db_trips_per_op"));
    }
    header.addAll(
        List.of(
            "cpu_window_ops",
            "cpu_client_us_per_op",
            "cpu_cache_us_per_op",
            "cpu_db_us_per_op",
            "cpu_total_us_per_op",
            "machine_busy_percent",
            "db_statements_per_op",
            "db_commits_per_op",
            "db_fsyncs_per_op",
            "failed_ops",
            "anomalies",
            "rows_checked",
            "writeback_pending_at_end",
            "writeback_drained",
            "peak_pinned_bytes",
            "raw_output"));
    List<String> lines = new ArrayList<>();
    lines.add(String.join(",", header));
    for (ReportRow row : rows) {
      RunResult r = row.result();
      Optional<BindingStats> stats = r.stats();
      List<String> cells =
          new ArrayList<>(
              List.of(
                  r.configuration().name(),
                  r.configuration().database().name(),
                  r.configuration().policy(),
                  r.workload().name(),
                  number(r.workload().scanPercent()),
                  String.valueOf(r.threads()),
                  String.valueOf(r.records()),
                  String.valueOf(r.seconds()),
                  r.regime().cores(),
                  number(r.ycsb().throughput()),
                  number(row.ratioToDatabaseAlone()),
                  number(r.steadyThroughput()),
                  number(row.steadyRatioToDatabaseAlone())));
      for (String op : BindingStats.OPERATION_TYPES) {
        OperationStats s = r.ycsb().operations().get(op);
        cells.add(s == null ? "0" : String.valueOf(s.operations()));
        cells.add(s == null ? "" : number(s.averageLatencyUs()));
        cells.add(s == null ? "" : number(s.p95LatencyUs()));
        cells.add(s == null ? "" : number(s.p99LatencyUs()));
        cells.add(stats.map(b -> number(b.cacheTripsPerOperation(op))).orElse(""));
        cells.add(stats.map(b -> number(b.cacheAwaitedPerOperation(op))).orElse(""));
        cells.add(stats.map(b -> number(b.dbTripsPerOperation(op))).orElse(""));
      }
      Optional<CpuUsage> cpu = r.cpu();
      cells.add(cpu.map(c -> String.valueOf(c.operations())).orElse(""));
      cells.add(cpu.map(c -> number(c.clientMicrosPerOperation())).orElse(""));
      cells.add(cpu.map(c -> number(c.cacheMicrosPerOperation())).orElse(""));
      cells.add(cpu.map(c -> number(c.databaseMicrosPerOperation())).orElse(""));
      cells.add(cpu.map(c -> number(c.totalMicrosPerOperation())).orElse(""));
      cells.add(cpu.map(c -> number(c.machineBusyPercent())).orElse(""));
      Optional<DatabaseWork> work = r.databaseWork();
      cells.add(work.map(w -> number(w.statementsPerOperation())).orElse(""));
      cells.add(work.map(w -> number(w.commitsPerOperation())).orElse(""));
      cells.add(work.map(w -> number(w.fsyncsPerOperation())).orElse(""));
      cells.add(String.valueOf(r.ycsb().failedOperations()));
      cells.add(stats.map(b -> String.valueOf(b.anomalies())).orElse(""));
      cells.add(stats.map(b -> String.valueOf(b.rowReadsChecked())).orElse(""));
      cells.add(
          stats
              .flatMap(
                  b ->
                      b.writebackPendingAtEnd().isPresent()
                          ? Optional.of(String.valueOf(b.writebackPendingAtEnd().getAsLong()))
                          : Optional.empty())
              .orElse(""));
      cells.add(
          stats
              .flatMap(
                  b ->
                      b.writebackDrained().isPresent()
                          ? Optional.of(String.valueOf(b.writebackDrained().getAsLong()))
                          : Optional.empty())
              .orElse(""));
      cells.add(r.configuration().writeBack() ? String.valueOf(r.peakPinnedBytes()) : "");
      cells.add(r.rawOutput());
      lines.add(cells.stream().map(ReportWriter::csvCell).collect(Collectors.joining(",")));
    }
    Files.write(file, lines);
  }

  /** What the markdown report says besides the table. */
  public record Header(
      String command, List<String> machineFacts, List<String> plots, List<String> failures) {}

  /**
   * A table per workload, in the order the runs were made: throughput, ratio, latencies, round trips, CPU,
   * database work, anomalies. When the runs were made in more than one regime ({@code dev/bench --db-cpus}: shared,
   * then the database capped), each workload first gets a table of every configuration's throughput and ratio in
   * each regime side by side, and its detailed table a regime column.
   */
  public static void writeMarkdown(List<ReportRow> rows, Header header, Path file)
      throws IOException {
    StringBuilder md = new StringBuilder("# YCSB: Dendrite next to the databases alone\n\n");
    md.append("Command:\n\n```sh\n").append(header.command()).append("\n```\n\n");
    md.append("Machine:\n\n");
    header.machineFacts().forEach(f -> md.append("* ").append(f).append('\n'));
    if (!rows.isEmpty()) {
      RunResult first = rows.get(0).result();
      md.append("\n")
          .append(first.records())
          .append(" records, ")
          .append(first.threads())
          .append(" YCSB threads, ")
          .append(first.seconds())
          .append(" s per run. Dendrite's near cache holds at most ")
          .append(Bench.NEAR_CACHE_BYTES >> 20)
          .append(
              " MiB of encoded results (`-p dendrite.nearcachebytes=` in the command overrides it;")
          .append(" 0 turns it off); the YCSB client JVM runs with -Xmx2g.\n");
    }
    md.append(
        """

                Columns: throughput in operations/s; **× alone** = throughput ÷ the database alone's on the same
                workload in this run; **steady** = the same over the second half of the run; latencies p95/p99 in
                µs per operation type; round trips = cache/database calls per operation as counted by the binding;
                **CPU** = CPU time (user + system, `/proc/<pid>/stat`) per operation of the YCSB client JVM / the
                run's cache servers together (0 for the database alone) / the database server (MariaDB or
                FerretDB, by its `dev/services` pid file), then their sum; **busy** = the share of all the
                machine's cores busy meanwhile (`/proc/stat`), whoever used them; **db work** = per operation, the
                statements / commits / fsyncs the database server counted itself (MariaDB: `Questions` less the
                report's own reads, `Handler_commit`, which counts every autocommitted statement and read-only
                transaction too, `Innodb_data_fsyncs`; MongoDB: the `serverStatus` opcounters, which FerretDB
                does not give, and no commit or fsync count); anomalies = stale reads found by the checker /
                rows it checked.

                CPU and db work are measured from YCSB's first status line (its workload threads starting) to its
                last (those threads finished), the window its throughput is measured over, and divided by the
                operations its counter shows in between. The database server may be serving others at the same
                time; – = /proc or the server could not tell (the console says why) or there is no such process
                or counter.

                Steady throughput counts the operations between the first YCSB status line at or after half the run
                and the last one within it, leaving out the JIT warm-up and cold cache of each run's fresh JVM
                (– when the run was too short for two such lines).

                Warm-ups (the database alone's after the load, and each cached run's before it, in a JVM of
                their own) of a workload that scans run its scans alone, so that a measured run finds its
                ranges cached as a long-running service does; the measured run runs the workload as written.
                """);
    List<Regime> regimes = rows.stream().map(r -> r.result().regime()).distinct().toList();
    boolean severalRegimes = regimes.size() > 1;
    if (regimes.stream().anyMatch(Regime::capped)) {
      md.append(
          """

              Regimes: **shared** = every process shares the machine's cores as it comes; **db capped at F
              cores** = the database server (MariaDB or FerretDB, by its `dev/services` pid file) runs in a cgroup
              CPU quota of F cores (`dev/bench --db-cpus F`), so that it is the bottleneck, as on a database
              server of its own in the CPR paper, while the YCSB client and the cache servers share the rest of
              the machine. Every configuration ran in the shared regime first, then with the database capped;
              each regime's **× alone** divides by the database alone in the same regime.
              """);
    }
    Map<String, List<ReportRow>> byWorkload = new LinkedHashMap<>();
    rows.forEach(
        r ->
            byWorkload
                .computeIfAbsent(r.result().workload().name(), w -> new ArrayList<>())
                .add(r));
    byWorkload.forEach(
        (workload, workloadRows) -> {
          Workload w = workloadRows.get(0).result().workload();
          md.append("\n### ")
              .append(workload)
              .append(" (")
              .append(number(w.scanPercent()))
              .append(" % scan")
              .append(w.shape().isEmpty() ? "" : ", " + w.shape())
              .append(")")
              .append(severalRegimes ? "" : regimes.get(0).qualifier())
              .append("\n\n");
          if (severalRegimes) {
            sideBySide(md, regimes, workloadRows);
          }
          md.append(severalRegimes ? "| config | regime" : "| config")
              .append(
                  " | ops/s | × alone | steady ops/s (2nd half) | × alone (steady) | p95/p99 µs"
                      + " | cache requests (round trips awaited) / db round trips per op | CPU µs/op client/cache/db = total | busy %"
                      + " | db work per op statements/commits/fsyncs | failed | anomalies / rows checked |\n")
              .append(severalRegimes ? "|---|---" : "|---")
              .append("|---:|---:|---:|---:|---|---|---|---:|---|---:|---:|\n");
          for (ReportRow row : workloadRows) {
            RunResult r = row.result();
            md.append("| ").append(r.configuration().name());
            if (severalRegimes) {
              md.append(" | ").append(r.regime().label());
            }
            md.append(" | ")
                .append(throughput(OptionalDouble.of(r.ycsb().throughput())))
                .append(" | ")
                .append(ratio(row.ratioToDatabaseAlone()))
                .append(" | ")
                .append(throughput(r.steadyThroughput()))
                .append(" | ")
                .append(ratio(row.steadyRatioToDatabaseAlone()))
                .append(" | ")
                .append(latencies(r))
                .append(" | ")
                .append(roundTrips(r))
                .append(" | ")
                .append(cpuPerOperation(r))
                .append(" | ")
                .append(r.cpu().map(c -> integer(c.machineBusyPercent())).orElse("–"))
                .append(" | ")
                .append(databaseWork(r))
                .append(" | ")
                .append(r.ycsb().failedOperations())
                .append(" | ")
                .append(r.stats().map(s -> s.anomalies() + " / " + s.rowReadsChecked()).orElse("–"))
                .append(" |\n");
          }
        });
    if (!header.plots().isEmpty()) {
      md.append("\n## Plots\n\n");
      header.plots().forEach(p -> md.append("![").append(p).append("](").append(p).append(")\n\n"));
    }
    if (!header.failures().isEmpty()) {
      md.append("\n## Runs that did not finish\n\n");
      header.failures().forEach(f -> md.append("* ").append(f).append('\n'));
    }
    Files.writeString(file, md);
  }

  /**
   * One line per configuration of a workload: its throughput and ratios in each regime side by side (– where it
   * has no run in a regime).
   */
  private static void sideBySide(
      StringBuilder md, List<Regime> regimes, List<ReportRow> workloadRows) {
    md.append("| config");
    regimes.forEach(
        g ->
            md.append(" | ")
                .append(g.label())
                .append(": ops/s | × alone | steady ops/s | × alone (steady)"));
    md.append(" |\n|---").append("|---:|---:|---:|---:".repeat(regimes.size())).append("|\n");
    Map<String, Map<Regime, ReportRow>> byConfig = new LinkedHashMap<>();
    workloadRows.forEach(
        r ->
            byConfig
                .computeIfAbsent(r.result().configuration().name(), c -> new LinkedHashMap<>())
                .putIfAbsent(r.result().regime(), r));
    byConfig.forEach(
        (config, byRegime) -> {
          md.append("| ").append(config);
          for (Regime g : regimes) {
            ReportRow row = byRegime.get(g);
            if (row == null) {
              md.append(" | – | – | – | –");
            } else {
              md.append(" | ")
                  .append(throughput(OptionalDouble.of(row.result().ycsb().throughput())))
                  .append(" | ")
                  .append(ratio(row.ratioToDatabaseAlone()))
                  .append(" | ")
                  .append(throughput(row.result().steadyThroughput()))
                  .append(" | ")
                  .append(ratio(row.steadyRatioToDatabaseAlone()));
            }
          }
          md.append(" |\n");
        });
    md.append('\n');
  }

  private static String latencies(RunResult r) {
    return BindingStats.OPERATION_TYPES.stream()
        .filter(
            op ->
                r.ycsb().operations().containsKey(op)
                    && r.ycsb().operations().get(op).operations() > 0)
        .map(
            op -> {
              OperationStats s = r.ycsb().operations().get(op);
              return op + " " + integer(s.p95LatencyUs()) + "/" + integer(s.p99LatencyUs());
            })
        .collect(Collectors.joining("; "));
  }

  private static String roundTrips(RunResult r) {
    if (r.stats().isEmpty()) {
      return "–";
    }
    BindingStats s = r.stats().get();
    return BindingStats.OPERATION_TYPES.stream()
        .filter(op -> s.operations().getOrDefault(op, 0L) > 0)
        .map(
            op ->
                String.format(
                    Locale.ROOT,
                    "%s %.2f (%.2f awaited)/%.2f",
                    op,
                    s.cacheTripsPerOperation(op),
                    s.cacheAwaitedPerOperation(op),
                    s.dbTripsPerOperation(op)))
        .collect(Collectors.joining("; "));
  }

  private static String cpuPerOperation(RunResult r) {
    if (r.cpu().isEmpty()) {
      return "–";
    }
    CpuUsage c = r.cpu().get();
    return integer(c.clientMicrosPerOperation())
        + "/"
        + integer(c.cacheMicrosPerOperation())
        + "/"
        + integer(c.databaseMicrosPerOperation())
        + " = "
        + integer(c.totalMicrosPerOperation());
  }

  private static String databaseWork(RunResult r) {
    return r.databaseWork()
        .map(
            w ->
                ratio(w.statementsPerOperation())
                    + "/"
                    + ratio(w.commitsPerOperation())
                    + "/"
                    + ratio(w.fsyncsPerOperation()))
        .orElse("–");
  }

  private static String integer(OptionalDouble v) {
    return v.isPresent() ? integer(v.getAsDouble()) : "–";
  }

  private static String throughput(OptionalDouble v) {
    return v.isPresent() ? String.format(Locale.ROOT, "%,.0f", v.getAsDouble()) : "–";
  }

  private static String ratio(OptionalDouble v) {
    return v.isPresent() ? String.format(Locale.ROOT, "%.2f", v.getAsDouble()) : "–";
  }

  private static String integer(double v) {
    return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.0f", v);
  }

  private static String number(OptionalDouble v) {
    return v.isPresent() ? number(v.getAsDouble()) : "";
  }

  private static String number(double v) {
    if (Double.isNaN(v)) {
      return "";
    }
    return v == Math.rint(v) && Math.abs(v) < 1e15
        ? String.valueOf((long) v)
        : String.format(Locale.ROOT, "%.4f", v);
  }

  private static String csvCell(String s) {
    return s.contains(",") || s.contains("\"") || s.contains("\n")
        ? "\"" + s.replace("\"", "\"\"") + "\""
        : s;
  }
}
