package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner end to end in a tiny mode over YCSB's own {@code BasicDB}: real child JVMs running
 * {@code site.ycsb.Client}, real IQ server processes polled for pinned memory, a real memcached process,
 * their CPU read from /proc, and the report written from what they printed.
 */
class BenchIT {

  @TempDir Path out;

  @Test
  void loadsRunsEveryConfigurationOnEveryWorkloadAndWritesTheReport() throws Exception {
    Database basic = Database.withoutReset("basicdb");
    Map<String, String> quiet = Map.of("basicdb.verbose", "false");
    Configuration alone =
        new Configuration(
            "basicdb",
            basic,
            Configuration.ALONE,
            "site.ycsb.BasicDB",
            quiet,
            Configuration.Cache.NONE);
    // A slower BasicDB stands in for a cached configuration, so that the ratio is not 1.
    Configuration cached =
        new Configuration(
            "basicdb-write-back",
            basic,
            "write-back",
            "site.ycsb.BasicDB",
            Map.of("basicdb.verbose", "false", "basicdb.simulatedelay", "2"),
            Configuration.Cache.IQ_SERVERS);
    Configuration lookaside =
        new Configuration(
            "basicdb-lookaside",
            basic,
            "look-aside",
            "site.ycsb.BasicDB",
            quiet,
            Configuration.Cache.MEMCACHED);
    Path workloads = Path.of("workloads");
    List<Workload> mixes =
        List.of(
            Workload.read(workloads.resolve("cpr-star-10")),
            Workload.read(workloads.resolve("cpr-star-99")));
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Bench.Plan plan =
        new Bench.Plan(
            List.of(alone, cached, lookaside),
            mixes,
            workloads.resolve("load"),
            500,
            3,
            1,
            2,
            2,
            1,
            Map.of(),
            classpath,
            System.getenv().getOrDefault("DENDRITE_MEMCACHED_BIN", "memcached"),
            out,
            "BenchIT",
            Optional.empty(),
            Optional.empty());
    ByteArrayOutputStream console = new ByteArrayOutputStream();

    Bench.Outcome outcome = Bench.run(plan, new PrintStream(console, true, StandardCharsets.UTF_8));

    String progress = console.toString(StandardCharsets.UTF_8);
    assertThat(outcome.failures()).as(progress).isEmpty();
    assertThat(progress)
        .contains("loading 500 records into basicdb", "run 6/6: basicdb-lookaside on cpr-star-99")
        .containsPattern("basicdb-write-back +cpr-star-10 +\\d+ s +[0-9,]+ ops/s");
    assertThat(outcome.rows()).hasSize(6);
    assertThat(outcome.rows())
        .filteredOn(r -> r.result().configuration() == alone)
        .allSatisfy(r -> assertThat(r.ratioToDatabaseAlone()).hasValue(1.0));
    assertThat(outcome.rows())
        .filteredOn(r -> r.result().configuration() == cached)
        .allSatisfy(
            r -> {
              assertThat(r.ratioToDatabaseAlone().getAsDouble()).isLessThan(1.0);
              assertThat(r.result().pinned()).isNotEmpty();
            });
    assertThat(outcome.rows())
        .allSatisfy(r -> assertThat(r.result().ycsb().failedOperations()).isZero());
    // 3 s runs with a status line every second: the second half has the lines at 2 s and 3 s.
    // A run has a steady figure when two of its status lines fall in its second half. On a busy
    // machine YCSB's status thread can be starved (one 3 s run printed every line stamped 3 s), and
    // then, by design, it has none; the others do.
    assertThat(outcome.rows())
        .anySatisfy(r -> assertThat(r.result().steadyThroughput()).isPresent())
        .allSatisfy(
            r ->
                r.result()
                    .steadyThroughput()
                    .ifPresent(
                        steady ->
                            assertThat(steady)
                                .as("steady throughput from %s", r.result().statuses())
                                .isPositive()));
    // BasicDB runs inside the client: there is no database server, so no database or total figure.
    assertThat(outcome.rows())
        .allSatisfy(
            r -> {
              CpuUsage cpu = r.result().cpu().orElseThrow();
              assertThat(cpu.clientMicrosPerOperation().getAsDouble()).isPositive();
              assertThat(cpu.databaseMillis()).isEmpty();
              assertThat(cpu.totalMicrosPerOperation()).isEmpty();
              assertThat(cpu.machineBusyPercent().getAsDouble()).isBetween(0.0, 100.0);
            });
    assertThat(outcome.rows())
        .filteredOn(r -> r.result().configuration() == alone)
        .allSatisfy(r -> assertThat(r.result().cpu().orElseThrow().cacheMillis()).hasValue(0));
    // BasicDB talks to neither cache; the IQ server JVMs still spend CPU of their own and answer
    // the poller.
    assertThat(outcome.rows())
        .filteredOn(r -> r.result().configuration() == cached)
        .allSatisfy(
            r ->
                assertThat(r.result().cpu().orElseThrow().cacheMillis().getAsDouble())
                    .isPositive());
    assertThat(outcome.rows())
        .filteredOn(r -> r.result().configuration() == lookaside)
        .allSatisfy(r -> assertThat(r.result().cpu().orElseThrow().cacheMillis()).isPresent());
    assertThat(progress).doesNotContain("WARNING");

    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    assertThat(csv).hasSize(7);
    assertThat(csv.get(0))
        .contains(
            ",ratio_to_db_alone,steady_ops_per_s,steady_ratio_to_db_alone,",
            ",cpu_client_us_per_op,cpu_cache_us_per_op,cpu_db_us_per_op,cpu_total_us_per_op,machine_busy_percent,");
    assertThat(csv.subList(1, 7))
        .extracting(l -> l.substring(0, l.indexOf(',', l.indexOf(',') + 1)))
        .containsExactly(
            "basicdb,basicdb",
            "basicdb,basicdb",
            "basicdb-write-back,basicdb",
            "basicdb-write-back,basicdb",
            "basicdb-lookaside,basicdb",
            "basicdb-lookaside,basicdb");
    String report = Files.readString(out.resolve("report.md"));
    assertThat(report)
        .contains(
            "### cpr-star-10",
            "### cpr-star-99",
            "| basicdb-write-back |",
            "| steady ops/s (2nd half) | × alone (steady) |",
            "| CPU µs/op client/cache/db = total | busy % |",
            "improvement-basicdb-all-fields.png",
            "pinned-memory.png");
    assertThat(out.resolve("improvement-basicdb-all-fields.png")).isNotEmptyFile();
    assertThat(out.resolve("pinned-memory.png")).isNotEmptyFile();
    assertThat(out.resolve("raw/load-basicdb.out")).isNotEmptyFile();
    assertThat(out.resolve("raw/basicdb-write-back__cpr-star-10.out"))
        .content()
        .contains("[OVERALL], Throughput(ops/sec)");
    assertThat(out.resolve("raw/basicdb-write-back__cpr-star-10.warmup.out")).isNotEmptyFile();
  }
}
