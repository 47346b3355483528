package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

class BenchMainTest {

  private static final List<Configuration> KNOWN =
      Configurations.standard("jdbc:mysql://db/x", "mongodb://db/", Path.of("target/services"));

  @TempDir Path results;

  @Test
  void quickRunsMysqlItsDendritePoliciesAndLookAsideOnTwoCprMixesAndA() throws IOException {
    Bench.Plan plan = plan("--quick");

    assertThat(plan.configurations())
        .extracting(Configuration::name)
        .containsExactly(
            "mysql",
            "mysql-write-around",
            "mysql-write-through",
            "mysql-write-back",
            "mysql-lookaside");
    assertThat(plan.workloads())
        .extracting(Workload::name)
        .containsExactly("cpr-star-10", "cpr-star-99", "A");
    assertThat(plan.records()).isEqualTo(20_000);
    assertThat(plan.seconds()).isEqualTo(20);
    assertThat(plan.command()).isEqualTo("dev/bench --quick");
    assertThat(plan.outputDir().getParent()).isEqualTo(results);
  }

  @Test
  void theFullRunHasEveryConfigurationAndWorkloadAndOptionsOverrideDefaults() throws IOException {
    Bench.Plan full = plan();
    assertThat(full.configurations()).hasSize(9);
    assertThat(full.workloads()).hasSize(21);
    assertThat(full.workloads().get(full.workloads().size() - 1).name()).isEqualTo("E");
    assertThat(full.records()).isEqualTo(100_000);

    Bench.Plan custom =
        plan(
            "--quick",
            "--records",
            "1000000",
            "--seconds",
            "7",
            "--threads",
            "8",
            "-p",
            "dendrite.drainthreads=4",
            "--workloads",
            "S,cpr-one-50");
    assertThat(custom.records()).isEqualTo(1_000_000);
    assertThat(custom.seconds()).isEqualTo(7);
    assertThat(custom.threads()).isEqualTo(8);
    assertThat(custom.extraProperties()).containsEntry("dendrite.drainthreads", "4");
    assertThat(custom.workloads())
        .extracting(Workload::name, Workload::scanPercent, Workload::shape)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("S", 95.0, ""),
            org.assertj.core.groups.Tuple.tuple("cpr-one-50", 50.0, Workload.ONE_FIELD));
  }

  @Test
  void theDatabaseAloneIsAddedWhenLeftOut() throws IOException {
    assertThat(plan("--configs", "mongodb-write-back").configurations())
        .extracting(Configuration::name)
        .containsExactly("mongodb", "mongodb-write-back");
  }

  @Test
  void anOutageRunsEachDatabaseAloneAndTardisOverItWithAStatusLineEverySecond() throws IOException {
    Bench.Plan plan = plan("--outage-at", "10", "--outage-for", "15", "--seconds", "60");

    assertThat(plan.outage()).contains(new Outage(10, 15));
    assertThat(plan.statusIntervalSeconds()).isEqualTo(1);
    assertThat(plan.configurations())
        .extracting(Configuration::name)
        .containsExactly("mysql", "mysql-tardis", "mongodb", "mongodb-tardis");
    assertThat(plan("--configs", "mysql-tardis").configurations())
        .extracting(Configuration::name)
        .containsExactly("mysql", "mysql-tardis");
    assertThat(plan().outage()).isEmpty();
    assertThat(plan().configurations())
        .extracting(Configuration::name)
        .doesNotContain("mysql-tardis");
  }

  @Test
  void anOutageNeedsBothOptionsAndTimeToRecover() {
    assertThatThrownBy(() -> plan("--outage-at", "10"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--outage-at and --outage-for go together");
    assertThatThrownBy(() -> plan("--outage-at", "10", "--outage-for", "20", "--seconds", "30"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the outage must end before the run does");
    assertThatThrownBy(() -> plan("--outage-at", "0", "--outage-for", "5"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1 s before it");
  }

  @Test
  void badOptionsAreNamed() {
    assertThatThrownBy(() -> plan("--configs", "oracle"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown configuration oracle");
    assertThatThrownBy(() -> plan("--seconds", "ten"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("option '--seconds': 'ten' is not an int");
    assertThatThrownBy(() -> plan("--threads", "0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("threads must be positive");
    assertThatThrownBy(() -> plan("--workloads", "Z"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no workload file");
    assertThatThrownBy(() -> plan("--fast"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("Unknown option: '--fast'");
    assertThatThrownBy(() -> plan("-p", "novalue"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("option '-p' (key=value) should be in KEY=VALUE format");
  }

  @Test
  void aBadOptionPrintsWhatIsWrongAndTheUsageAndExitsWith2AndHelpExitsWith0() {
    CommandLine commandLine = BenchMain.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    commandLine.setOut(new PrintWriter(out)).setErr(new PrintWriter(err));

    assertThat(commandLine.execute("--seconds", "ten")).isEqualTo(2);
    assertThat(err.toString())
        .startsWith("dev/bench: Invalid value for option '--seconds': 'ten' is not an int")
        .contains("Usage: dev/bench [options]", "--db-cpus=F", "Known configurations: ");
    assertThat(BenchMain.commandLine().setOut(new PrintWriter(out)).execute("--help")).isZero();
    assertThat(out.toString()).contains("--app-processes=N");
  }

  @Test
  void theMySqlDriverOptionSetsTheUrlSchemeForEveryMySqlConfiguration() throws IOException {
    String url = "jdbc:mysql://127.0.0.1:13306/db?user=u&password=p";

    assertThat(BenchMain.mysqlUrl(url, BenchMain.DEFAULT_MYSQL_DRIVER))
        .isEqualTo("jdbc:mariadb://127.0.0.1:13306/db?user=u&password=p");
    assertThat(BenchMain.mysqlUrl("jdbc:mariadb://h/db", "connector-j"))
        .isEqualTo("jdbc:mysql://h/db");
    assertThat(BenchMain.mysqlUrl(null, BenchMain.DEFAULT_MYSQL_DRIVER)).isNull();
    assertThatThrownBy(() -> BenchMain.mysqlUrl(url, "odbc"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mariadb or connector-j, got odbc");
    assertThat(plan("--quick", "--mysql-driver", "connector-j").records()).isEqualTo(20_000);
  }

  @Test
  void dbCpusRunsEveryConfigurationSharedThenWithTheDatabaseInTheCgroupDevBenchMade()
      throws IOException {
    Map<String, String> env =
        Map.of(
            "DENDRITE_DB_CGROUP", "/sys/fs/cgroup/cpu/dendrite-db",
            "DENDRITE_DB_CGROUP_ROOT", "/sys/fs/cgroup/cpu");

    Bench.Plan plan = planIn(env, "--quick", "--db-cpus", "0.25");

    assertThat(plan.databaseCpuCap())
        .contains(
            new DatabaseCpuCap(
                0.25, Path.of("/sys/fs/cgroup/cpu/dendrite-db"), Path.of("/sys/fs/cgroup/cpu")));
    assertThat(plan.regimes()).containsExactly(Regime.SHARED, Regime.capped(0.25));
    assertThat(plan.regimes().get(1).label()).isEqualTo("db capped at 0.25 cores");
    assertThat(planIn(env, "--db-cpus", "1").regimes().get(1).label())
        .isEqualTo("db capped at 1 core");
    assertThat(planIn(env, "--db-cpus", "1.50").regimes().get(1).cores()).isEqualTo("1.5");
    assertThat(plan("--quick").databaseCpuCap()).isEmpty();
    assertThat(plan("--quick").regimes()).containsExactly(Regime.SHARED);
  }

  @Test
  void dbCpusRefusesZeroNegativesAndNonNumbersAndNeedsTheCgroup() {
    Map<String, String> env = Map.of("DENDRITE_DB_CGROUP", "/g", "DENDRITE_DB_CGROUP_ROOT", "/");
    for (String bad : List.of("0", "0.0", "-1", "-0.25", "abc", "1e3", "0x1", "1,5", "", ".")) {
      assertThatThrownBy(() -> planIn(env, "--db-cpus", bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("--db-cpus needs a positive number of cores")
          .hasMessageContaining("got '" + bad + "'");
    }
    assertThatThrownBy(() -> planIn(Map.of(), "--db-cpus", "0.25"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("DENDRITE_DB_CGROUP")
        .hasMessageContaining("dev/bench --db-cpus 0.25");
    assertThatThrownBy(
            () -> planIn(env, "--db-cpus", "0.5", "--outage-at", "5", "--outage-for", "5"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--db-cpus runs no outage");
  }

  private Bench.Plan plan(String... argv) throws IOException {
    return planIn(Map.of(), argv);
  }

  private Bench.Plan planIn(Map<String, String> env, String... argv) throws IOException {
    String[] withDirs = new String[argv.length + 4];
    System.arraycopy(argv, 0, withDirs, 0, argv.length);
    withDirs[argv.length] = "--workloads-dir";
    withDirs[argv.length + 1] = "workloads";
    withDirs[argv.length + 2] = "--output";
    withDirs[argv.length + 3] = results.toString();
    CommandLine commandLine = BenchMain.commandLine();
    commandLine.parseArgs(withDirs);
    Bench.Plan plan = commandLine.<BenchMain>getCommand().plan(KNOWN, env);
    return new Bench.Plan(
        plan.configurations(),
        plan.workloads(),
        plan.loadWorkload(),
        plan.records(),
        plan.seconds(),
        plan.warmupSeconds(),
        plan.threads(),
        plan.iqServers(),
        plan.statusIntervalSeconds(),
        plan.extraProperties(),
        plan.classpath(),
        plan.memcachedBinary(),
        plan.outputDir(),
        plan.command().replace(" --workloads-dir workloads --output " + results, ""),
        plan.outage(),
        plan.databaseCpuCap());
  }
}
