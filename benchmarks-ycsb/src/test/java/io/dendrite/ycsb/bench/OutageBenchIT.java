package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.ycsb.bench.OutageRun.Phase;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dev/bench --outage-at 4 --outage-for 4} in small, end to end over the real MariaDB: YCSB child JVMs of
 * MySQL alone and of TARDIS over it, each run's database cut through a proxy in the middle of the run. The
 * database alone fails its operations during the outage; TARDIS fails no update, recovers, and after the run the
 * database holds every update either acknowledged.
 */
@ExtendWith(RealServers.class)
class OutageBenchIT {

  @TempDir Path out;

  @Test
  void theDatabaseAloneFailsThroughTheOutageAndTardisAcknowledgesEveryUpdateAndLosesNone(
      MySqlTestDatabase database) throws Exception {
    List<Configuration> known =
        Configurations.standard(
            BenchMain.mysqlUrl(database.jdbcUrl(), BenchMain.DEFAULT_MYSQL_DRIVER),
            null,
            Path.of(System.getenv().getOrDefault("DENDRITE_SERVICES_DIR", "target/services")));
    List<Configuration> configurations =
        known.stream()
            .filter(c -> c.name().equals("mysql") || c.name().equals("mysql-tardis"))
            .toList();
    Path workloads = Path.of("workloads");
    Bench.Plan plan =
        new Bench.Plan(
            configurations,
            List.of(Workload.read(workloads.resolve("A"))),
            workloads.resolve("load"),
            1_000,
            14,
            0,
            2,
            1,
            1,
            // Uniform keys: zipfian's hottest document makes a second writer wait out the first
            // one's store timeout for its lease (docs/tardis.md), which is not what this checks.
            Map.of("requestdistribution", "uniform", "tardis.arworkers", "4"),
            System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
            System.getenv().getOrDefault("DENDRITE_MEMCACHED_BIN", "memcached"),
            out,
            "OutageBenchIT",
            Optional.of(new Outage(4, 4)),
            Optional.empty());
    ByteArrayOutputStream console = new ByteArrayOutputStream();

    Bench.Outcome outcome = Bench.run(plan, new PrintStream(console, true, StandardCharsets.UTF_8));

    String progress = console.toString(StandardCharsets.UTF_8);
    assertThat(outcome.failures()).as(progress).isEmpty();
    assertThat(outcome.outageRuns())
        .extracting(r -> r.configuration().name())
        .containsExactly("mysql", "mysql-tardis");
    OutageRun alone = outcome.outageRuns().get(0);
    OutageRun tardis = outcome.outageRuns().get(1);
    assertThat(alone.cutAt()).as(progress).isPresent();
    assertThat(alone.restoredAt()).isPresent();

    assertThat(alone.failures("UPDATE", Phase.DURING)).as(progress).isPositive();
    assertThat(alone.failures("READ", Phase.DURING)).isPositive();
    assertThat(alone.successesPerSecond(Phase.AFTER).getAsDouble()).isPositive();
    assertThat(alone.recoverySeconds()).as("nothing buffered").isEmpty();

    assertThat(tardis.failures("UPDATE")).as(progress).isZero();
    assertThat(tardis.successesPerSecond(Phase.DURING).getAsDouble()).isPositive();
    OutageStats tardisStats = tardis.stats().orElseThrow();
    assertThat(tardisStats.peakBuffered().getAsLong()).isPositive();
    assertThat(tardisStats.absorbed().getAsLong()).isPositive();
    assertThat(tardis.recoverySeconds()).as(progress).isPresent();

    for (OutageRun run : outcome.outageRuns()) {
      OutageStats stats = run.stats().orElseThrow();
      assertThat(stats.skipped()).as(run.configuration().name()).isEmpty();
      assertThat(stats.recordsChecked()).as(run.configuration().name()).hasValue(1_000);
      assertThat(stats.lostWrites()).as(run.configuration().name()).hasValue(0);
    }
    String report = Files.readString(out.resolve(OutageReport.FILE));
    assertThat(report).contains("### A", "| mysql |", "| mysql-tardis |", "outage-A.png");
    assertThat(out.resolve("outage-A.png")).isRegularFile();
    assertThat(out.resolve("report.md")).isRegularFile();
  }
}
