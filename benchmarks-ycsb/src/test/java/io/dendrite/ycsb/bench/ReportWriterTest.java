package io.dendrite.ycsb.bench;

import static io.dendrite.ycsb.bench.Fixtures.ALONE;
import static io.dendrite.ycsb.bench.Fixtures.WRITE_BACK;
import static io.dendrite.ycsb.bench.Fixtures.WRITE_THROUGH;
import static io.dendrite.ycsb.bench.Fixtures.cpr;
import static io.dendrite.ycsb.bench.Fixtures.run;
import static io.dendrite.ycsb.bench.Fixtures.stats;
import static io.dendrite.ycsb.bench.Fixtures.tooShortForSteady;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportWriterTest {

  @TempDir Path dir;

  private final List<ReportRow> rows =
      ReportRow.of(
          List.of(
              run(ALONE, cpr(10), 1000, Optional.empty()),
              run(WRITE_BACK, cpr(10), 4500, 6000, Optional.of(stats(0))),
              tooShortForSteady(WRITE_THROUGH, cpr(10), 2000)));

  @Test
  void csvHasAHeaderAndOneRectangularLinePerRun() throws IOException {
    Path csv = dir.resolve("results.csv");
    ReportWriter.writeCsv(rows, csv);

    List<String> lines = Files.readAllLines(csv);
    assertThat(lines).hasSize(4);
    List<String> header = Arrays.asList(lines.get(0).split(","));
    assertThat(header)
        .startsWith(
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
            "steady_ratio_to_db_alone");
    assertThat(header)
        .contains(
            "scan_p95_us",
            "update_p99_us",
            "scan_cache_trips_per_op",
            "update_db_trips_per_op",
            "anomalies",
            "rows_checked",
            "peak_pinned_bytes",
            "cpu_window_ops",
            "cpu_client_us_per_op",
            "cpu_cache_us_per_op",
            "cpu_db_us_per_op",
            "cpu_total_us_per_op",
            "machine_busy_percent",
            "db_statements_per_op",
            "db_commits_per_op",
            "db_fsyncs_per_op");
    assertThat(header).doesNotContain("db_bound_projection");
    for (String line : lines) {
      assertThat(line.split(",", -1)).hasSameSizeAs(header.toArray());
    }
    List<String> wb = Arrays.asList(lines.get(2).split(",", -1));
    assertThat(wb.get(header.indexOf("config"))).isEqualTo("mysql-write-back");
    assertThat(wb.get(header.indexOf("ratio_to_db_alone"))).isEqualTo("4.5000");
    assertThat(wb.get(header.indexOf("throughput_ops_per_s"))).isEqualTo("4500");
    assertThat(wb.get(header.indexOf("steady_ops_per_s"))).isEqualTo("6000");
    assertThat(wb.get(header.indexOf("steady_ratio_to_db_alone"))).isEqualTo("5");
    assertThat(wb.get(header.indexOf("scan_count"))).isEqualTo("900");
    assertThat(wb.get(header.indexOf("scan_p95_us"))).isEqualTo("2000");
    assertThat(wb.get(header.indexOf("update_cache_trips_per_op"))).isEqualTo("4");
    assertThat(wb.get(header.indexOf("update_cache_awaited_per_op"))).isEqualTo("2");
    assertThat(wb.get(header.indexOf("scan_db_trips_per_op"))).isEqualTo("0.1000");
    assertThat(wb.get(header.indexOf("failed_ops"))).isEqualTo("1");
    assertThat(wb.get(header.indexOf("anomalies"))).isEqualTo("0");
    assertThat(wb.get(header.indexOf("rows_checked"))).isEqualTo("4500");
    assertThat(wb.get(header.indexOf("writeback_pending_at_end"))).isEqualTo("3");
    assertThat(wb.get(header.indexOf("peak_pinned_bytes"))).isEqualTo("4096");
    assertThat(wb.get(header.indexOf("cpu_window_ops"))).isEqualTo("2000");
    assertThat(wb.get(header.indexOf("cpu_client_us_per_op"))).isEqualTo("300");
    assertThat(wb.get(header.indexOf("cpu_cache_us_per_op"))).isEqualTo("200");
    assertThat(wb.get(header.indexOf("cpu_db_us_per_op"))).isEqualTo("125");
    assertThat(wb.get(header.indexOf("cpu_total_us_per_op"))).isEqualTo("625");
    assertThat(wb.get(header.indexOf("machine_busy_percent"))).isEqualTo("87.5000");
    assertThat(wb.get(header.indexOf("db_statements_per_op"))).isEqualTo("0.2500");
    assertThat(wb.get(header.indexOf("db_commits_per_op"))).isEqualTo("0.3000");
    assertThat(wb.get(header.indexOf("db_fsyncs_per_op"))).isEqualTo("0.0500");
    assertThat(wb.get(header.indexOf("db_cpus"))).isEmpty();
    List<String> alone = Arrays.asList(lines.get(1).split(",", -1));
    assertThat(alone.get(header.indexOf("ratio_to_db_alone"))).isEqualTo("1");
    assertThat(alone.get(header.indexOf("anomalies"))).isEmpty();
    assertThat(alone.get(header.indexOf("steady_ops_per_s"))).isEqualTo("1200");
    assertThat(alone.get(header.indexOf("cpu_cache_us_per_op"))).isEqualTo("0");
    assertThat(alone.get(header.indexOf("cpu_total_us_per_op"))).isEqualTo("800");
    assertThat(alone.get(header.indexOf("db_statements_per_op"))).isEqualTo("1.5000");
    assertThat(alone.get(header.indexOf("db_commits_per_op"))).isEqualTo("1");
    assertThat(alone.get(header.indexOf("db_fsyncs_per_op"))).isEqualTo("0.2500");
    List<String> tooShort = Arrays.asList(lines.get(3).split(",", -1));
    assertThat(tooShort.get(header.indexOf("ratio_to_db_alone"))).isEqualTo("2");
    assertThat(tooShort.get(header.indexOf("steady_ops_per_s"))).isEmpty();
    assertThat(tooShort.get(header.indexOf("steady_ratio_to_db_alone"))).isEmpty();
    assertThat(tooShort.get(header.indexOf("cpu_client_us_per_op"))).isEqualTo("300");
    assertThat(tooShort.get(header.indexOf("cpu_db_us_per_op"))).isEmpty();
    assertThat(tooShort.get(header.indexOf("cpu_total_us_per_op"))).isEmpty();
    assertThat(tooShort.get(header.indexOf("machine_busy_percent"))).isEmpty();
    assertThat(tooShort.get(header.indexOf("db_statements_per_op"))).isEqualTo("0.5000");
    assertThat(tooShort.get(header.indexOf("db_commits_per_op"))).isEmpty();
    assertThat(tooShort.get(header.indexOf("db_fsyncs_per_op"))).isEmpty();
  }

  @Test
  void markdownHasTheCommandMachineAndATableRowPerRun() throws IOException {
    Path md = dir.resolve("report.md");
    ReportWriter.writeMarkdown(
        rows,
        new ReportWriter.Header(
            "dev/bench --quick",
            List.of("CPU: test"),
            List.of("pinned-memory.png"),
            List.of("mysql-write-through on A: YCSB exited with 1")),
        md);

    String text = Files.readString(md);
    assertThat(text)
        .contains(
            "dev/bench --quick",
            "* CPU: test",
            "### cpr-star-10 (10 % scan, YCSB*)",
            "| config | ops/s | × alone | steady ops/s (2nd half) | × alone (steady) | p95/p99 µs |",
            "| cache requests (round trips awaited) / db round trips per op | CPU µs/op client/cache/db = total | busy %"
                + " | db work per op statements/commits/fsyncs | failed | anomalies / rows checked |",
            "Steady throughput counts the operations between the first YCSB status line at or after half the run",
            "CPU and db work are measured from YCSB's first status line",
            "`Handler_commit`, which counts every autocommitted statement and read-only",
            "| mysql | 1,000 | 1.00 | 1,200 | 1.00 | SCAN 2000/5000; UPDATE 1200/3000 | – | 300/0/500 = 800 | 88"
                + " | 1.50/1.00/0.25 | 1 | – |",
            "| mysql-write-through | 2,000 | 2.00 | – | – | SCAN 2000/5000; UPDATE 1200/3000 | – | 300/200/– = – | –"
                + " | 0.50/–/– | 1 |",
            "| mysql-write-back | 4,500 | 4.50 | 6,000 | 5.00 | SCAN 2000/5000; UPDATE 1200/3000"
                + " | SCAN 1.00 (1.00 awaited)/0.10; UPDATE 4.00 (2.00 awaited)/0.00 | 300/200/125 = 625 | 88 | 0.25/0.30/0.05 | 1 | 0 / 4500 |",
            "![pinned-memory.png](pinned-memory.png)",
            "mysql-write-through on A: YCSB exited with 1");
    assertThat(text)
        .doesNotContain("projection", "db-bound", "regime", "Regimes:", "capped")
        .contains("|---|---:|---:|---:|---:|---|---|---|---:|---|---:|---:|\n");
  }

  @Test
  void twoRegimesGoSideBySideEachRatioAgainstTheDatabaseAloneInItsRegime() throws IOException {
    Regime capped = Regime.capped(0.25);
    List<ReportRow> twoRegimes =
        ReportRow.of(
            List.of(
                run(ALONE, cpr(10), 1000, Optional.empty()),
                run(WRITE_BACK, cpr(10), 4500, 6000, Optional.of(stats(0))),
                run(ALONE, cpr(99), 3000, Optional.empty()),
                Fixtures.in(capped, run(ALONE, cpr(10), 250, 300, Optional.empty())),
                Fixtures.in(capped, run(WRITE_BACK, cpr(10), 2000, 2400, Optional.of(stats(0)))),
                Fixtures.in(capped, run(ALONE, cpr(99), 500, Optional.empty()))));
    Path md = dir.resolve("report.md");
    Path csv = dir.resolve("results.csv");

    ReportWriter.writeMarkdown(
        twoRegimes,
        new ReportWriter.Header(
            "dev/bench --db-cpus 0.25", List.of("CPU: test"), List.of(), List.of()),
        md);
    ReportWriter.writeCsv(twoRegimes, csv);

    String text = Files.readString(md);
    assertThat(text)
        .contains(
            "Regimes: **shared** = every process shares the machine's cores",
            "each regime's **× alone** divides by the database alone in the same regime",
            "### cpr-star-10 (10 % scan, YCSB*)\n\n"
                + "| config | shared: ops/s | × alone | steady ops/s | × alone (steady)"
                + " | db capped at 0.25 cores: ops/s | × alone | steady ops/s | × alone (steady) |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
                + "| mysql | 1,000 | 1.00 | 1,200 | 1.00 | 250 | 1.00 | 300 | 1.00 |\n"
                + "| mysql-write-back | 4,500 | 4.50 | 6,000 | 5.00 | 2,000 | 8.00 | 2,400 | 8.00 |\n",
            "| config | regime | ops/s | × alone | steady ops/s (2nd half) | × alone (steady) |",
            "|---|---|---:|---:|---:|---:|---|---|---|---:|---|---:|---:|\n",
            "| mysql-write-back | shared | 4,500 | 4.50 | 6,000 | 5.00 |",
            "| mysql-write-back | db capped at 0.25 cores | 2,000 | 8.00 | 2,400 | 8.00 |",
            "### cpr-star-99 (99 % scan, YCSB*)",
            "| mysql | 3,000 | 1.00 | 3,600 | 1.00 | 500 | 1.00 | 600 | 1.00 |")
        .doesNotContain("projection", "db-bound");

    List<String> lines = Files.readAllLines(csv);
    List<String> header = Arrays.asList(lines.get(0).split(","));
    List<String> cappedWriteBack = Arrays.asList(lines.get(5).split(",", -1));
    assertThat(cappedWriteBack.get(header.indexOf("config"))).isEqualTo("mysql-write-back");
    assertThat(cappedWriteBack.get(header.indexOf("db_cpus"))).isEqualTo("0.25");
    assertThat(cappedWriteBack.get(header.indexOf("ratio_to_db_alone"))).isEqualTo("8");
    assertThat(cappedWriteBack.get(header.indexOf("raw_output")))
        .isEqualTo("raw/mysql-write-back__cpr-star-10.db-cpus-0.25.out");
    List<String> sharedWriteBack = Arrays.asList(lines.get(2).split(",", -1));
    assertThat(sharedWriteBack.get(header.indexOf("db_cpus"))).isEmpty();
    assertThat(sharedWriteBack.get(header.indexOf("ratio_to_db_alone"))).isEqualTo("4.5000");
  }
}
