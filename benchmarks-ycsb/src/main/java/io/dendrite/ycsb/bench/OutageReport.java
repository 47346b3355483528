package io.dendrite.ycsb.bench;

import io.dendrite.ycsb.bench.OutageRun.Phase;
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
import java.util.OptionalLong;
import java.util.stream.Collectors;

/**
 * Writes {@value #FILE} for a run with {@code --outage-at}: per workload, every configuration side by side through
 * the outage (throughput before, during and after it, failures per phase and per operation type, whether the
 * database holds every acknowledged write afterwards, TARDIS's backlog and recovery), and a plot of the
 * throughput over time per workload.
 */
final class OutageReport {
  static final String FILE = "outage.md";

  private OutageReport() {}

  static void write(List<OutageRun> runs, ReportWriter.Header header, Path dir) throws IOException {
    StringBuilder md = new StringBuilder("# YCSB through a database outage\n\n");
    md.append("Command:\n\n```sh\n").append(header.command()).append("\n```\n\n");
    md.append("Machine:\n\n");
    header.machineFacts().forEach(f -> md.append("* ").append(f).append('\n'));
    if (!runs.isEmpty()) {
      OutageRun first = runs.get(0);
      md.append(
          String.format(
              Locale.ROOT,
              "%nThe database was cut %d s into each measured run of %d s and restored %d s later: a proxy in"
                  + " front of it refused connections and dropped the open ones, while the database server"
                  + " stayed up. Every configuration's database calls waited at most 1 s (`db.timeoutms`,"
                  + " unless set with -p).%n",
              first.outage().atSeconds(),
              first.runSeconds(),
              first.outage().forSeconds()));
    }
    md.append(
        """

        Columns: **ops/s** = operations that succeeded per second, from YCSB's per-interval counts, before the
        cut, during the outage and after the restore; **during ÷ before** = failed-mode throughput against normal
        mode; **failed** = operations that failed in each phase (YCSB's `-FAILED` counts), then over the whole run
        per operation type (YCSB's return codes); **acknowledged updates** = updates that returned OK;
        **lost writes** = fields whose value in the database, read back after the run once nothing was left
        buffered, was older than their last acknowledged write / records read back (– = not checked, the reason
        is under the table); **peak buffered** = documents TARDIS held buffered at once; **recovery** = seconds
        from the restore until TARDIS was back in normal mode with nothing buffered.

        The whole-run throughput in `report.md` includes the read-back after the run (YCSB counts the binding's
        cleanup in its run time); the figures here do not.
        """);
    Map<String, List<OutageRun>> byWorkload = new LinkedHashMap<>();
    runs.forEach(
        r -> byWorkload.computeIfAbsent(r.workload().name(), w -> new ArrayList<>()).add(r));
    List<String> notes = new ArrayList<>();
    for (Map.Entry<String, List<OutageRun>> workload : byWorkload.entrySet()) {
      md.append("\n### ").append(workload.getKey()).append("\n\n");
      md.append(
          "| config | ops/s before | ops/s during | ops/s after | during ÷ before | failed before /"
              + " during / after | failed over the run | acknowledged updates | lost writes / records"
              + " read back | peak buffered | recovery (s) |\n");
      md.append("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|\n");
      for (OutageRun r : workload.getValue()) {
        OptionalDouble before = r.successesPerSecond(Phase.BEFORE);
        OptionalDouble during = r.successesPerSecond(Phase.DURING);
        md.append("| ")
            .append(r.configuration().name())
            .append(" | ")
            .append(rate(before))
            .append(" | ")
            .append(rate(during))
            .append(" | ")
            .append(rate(r.successesPerSecond(Phase.AFTER)))
            .append(" | ")
            .append(
                before.isPresent() && during.isPresent() && before.getAsDouble() > 0
                    ? String.format(
                        Locale.ROOT, "%.2f", during.getAsDouble() / before.getAsDouble())
                    : "–")
            .append(" | ")
            .append(phaseFailures(r))
            .append(" | ")
            .append(runFailures(r))
            .append(" | ")
            .append(String.format(Locale.ROOT, "%,d", r.successes("UPDATE")))
            .append(" | ")
            .append(lostWrites(r, notes))
            .append(" | ")
            .append(
                r.stats()
                    .flatMap(s -> boxed(s.peakBuffered()))
                    .map(n -> String.format(Locale.ROOT, "%,d", n))
                    .orElse("–"))
            .append(" | ")
            .append(
                r.recoverySeconds().isPresent()
                    ? String.format(Locale.ROOT, "%.1f", r.recoverySeconds().getAsDouble())
                    : "–")
            .append(" |\n");
      }
      String plot = "outage-" + workload.getKey() + ".png";
      if (PlotWriter.outageThroughput(workload.getValue(), dir.resolve(plot))) {
        md.append("\n![").append(plot).append("](").append(plot).append(")\n");
      }
    }
    if (!notes.isEmpty()) {
      md.append("\nNot checked:\n\n");
      notes.forEach(n -> md.append("* ").append(n).append('\n'));
    }
    if (!header.failures().isEmpty()) {
      md.append("\n## Runs that did not finish\n\n");
      header.failures().forEach(f -> md.append("* ").append(f).append('\n'));
    }
    Files.writeString(dir.resolve(FILE), md);
  }

  private static String phaseFailures(OutageRun r) {
    List<String> operations = operations(r);
    List<String> phases = new ArrayList<>();
    for (Phase phase : Phase.values()) {
      phases.add(String.valueOf(operations.stream().mapToLong(op -> r.failures(op, phase)).sum()));
    }
    return String.join(" / ", phases);
  }

  private static String runFailures(OutageRun r) {
    return operations(r).stream()
        .map(op -> op + " " + r.failures(op))
        .collect(Collectors.joining(", "));
  }

  /** The operation types the run did (READ, UPDATE, ...), in the order of the binding stats' contract. */
  private static List<String> operations(OutageRun r) {
    return BindingStats.OPERATION_TYPES.stream()
        .filter(op -> r.ycsb().operations().containsKey(op) || r.failures(op) > 0)
        .toList();
  }

  private static String lostWrites(OutageRun r, List<String> notes) {
    if (r.stats().isEmpty() || r.stats().get().recordsChecked().isEmpty()) {
      notes.add(
          r.configuration().name()
              + " on "
              + r.workload().name()
              + ": "
              + r.stats()
                  .flatMap(OutageStats::skipped)
                  .orElse("the binding wrote no read-back (no stats file)"));
      return "–";
    }
    OutageStats s = r.stats().get();
    return String.format(
        Locale.ROOT, "%d / %,d", s.lostWrites().orElse(0), s.recordsChecked().getAsLong());
  }

  private static Optional<Long> boxed(OptionalLong value) {
    return value.isPresent() ? Optional.of(value.getAsLong()) : Optional.empty();
  }

  private static String rate(OptionalDouble v) {
    return v.isPresent() ? String.format(Locale.ROOT, "%,.0f", v.getAsDouble()) : "–";
  }
}
