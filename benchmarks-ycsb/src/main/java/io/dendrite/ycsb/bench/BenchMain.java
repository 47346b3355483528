package io.dendrite.ycsb.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code dev/bench}'s entry point: parses the options (picocli), picks the configurations and workloads and runs
 * {@link Bench}. The databases come from {@code DENDRITE_MYSQL_URL} and {@code DENDRITE_MONGO_URL} (as
 * {@code dev/services env} prints them); their server processes, whose CPU the report counts, from the pid
 * files under {@code DENDRITE_SERVICES_DIR} (default {@code target/services}, as for {@code dev/services}).
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "dev/bench",
    customSynopsis = {
      "dev/bench [options]",
      "       dev/bench --drain-statements [batches]   (one drained row's CPU with each MySQL "
          + "driver)"
    },
    sortOptions = false,
    usageHelpWidth = 116)
public final class BenchMain implements Callable<Integer> {

  /** The driver every MySQL configuration gets unless {@code --mysql-driver} names the other. */
  static final String DEFAULT_MYSQL_DRIVER = "mariadb";

  static final List<String> QUICK_CONFIGS =
      List.of(
          "mysql",
          "mysql-write-around",
          "mysql-write-through",
          "mysql-write-back",
          "mysql-lookaside");
  static final List<String> QUICK_WORKLOADS = List.of("cpr-star-10", "cpr-star-99", "A");

  /** The CPR mixes first (the headline), then the core workloads, E last as its inserts force a reload. */
  static final List<String> ALL_WORKLOADS;

  static {
    List<String> all = new ArrayList<>();
    for (String shape : List.of("star", "one")) {
      for (int f : new int[] {10, 25, 50, 75, 90, 95, 99, 100}) {
        all.add("cpr-" + shape + "-" + f);
      }
    }
    all.addAll(List.of("A", "B", "C", "S", "E"));
    ALL_WORKLOADS = List.copyOf(all);
  }

  @Option(
      names = "--quick",
      description =
          "the 10-minute run: 20 000 records, 20 s per run, 5 s warm-up, mysql, its three "
              + "Dendrite policies and look-aside on cpr-star-10, cpr-star-99, A")
  private boolean quick;

  @Option(
      names = "--records",
      paramLabel = "N",
      description = "records loaded per database (default 100000)")
  private Long records;

  @Option(
      names = "--seconds",
      paramLabel = "T",
      description = "measured seconds per run (default 60)")
  private Integer seconds;

  @Option(
      names = "--warmup",
      paramLabel = "W",
      description = "warm-up seconds per database and per cached run (default 10)")
  private Integer warmup;

  @Option(
      names = "--threads",
      paramLabel = "K",
      defaultValue = "4",
      description = "YCSB client threads (default ${DEFAULT-VALUE})")
  private int threads;

  @Option(
      names = "--configs",
      paramLabel = "NAME",
      split = ",",
      description = "configurations (default: all); the known ones are listed below")
  private List<String> configs;

  @Option(
      names = "--workloads",
      paramLabel = "NAME",
      split = ",",
      description = "workload files in the workloads directory (default: all)")
  private List<String> workloads;

  @Option(
      names = "--iq-servers",
      paramLabel = "N",
      defaultValue = "2",
      description = "IQ server processes per Dendrite run (default ${DEFAULT-VALUE})")
  private int iqServers;

  @Option(
      names = "--mysql-driver",
      paramLabel = "D",
      defaultValue = DEFAULT_MYSQL_DRIVER,
      description =
          "mariadb (default: MariaDB Connector/J, drains in its bulk protocol) or connector-j "
              + "(MySQL Connector/J); the same driver for every MySQL configuration")
  private String mysqlDriver;

  @Option(
      names = "--status-interval",
      paramLabel = "S",
      description = "seconds between progress lines (default 10)")
  private Integer statusInterval;

  @Option(
      names = "--workloads-dir",
      paramLabel = "DIR",
      defaultValue = "benchmarks-ycsb/workloads",
      description = "default ${DEFAULT-VALUE}")
  private Path workloadsDir;

  @Option(
      names = "--output",
      paramLabel = "DIR",
      defaultValue = "results",
      description = "results root (default ${DEFAULT-VALUE}); the report goes to DIR/<date>[-n]")
  private Path output;

  @Option(
      names = "-p",
      paramLabel = "key=value",
      description = "a property for every YCSB run (e.g. -p dendrite.drainthreads=4)")
  private Map<String, String> properties = new LinkedHashMap<>();

  @Option(
      names = "--outage-at",
      paramLabel = "T",
      description =
          "cut the database T s into every measured run (through a proxy in front of it) ...")
  private Integer outageAt;

  @Option(
      names = "--outage-for",
      paramLabel = "S",
      description =
          "... for S s; then outage.md compares throughput before, during and after, failures, "
              + "and whether the database holds every acknowledged write. Default configurations "
              + "then: each database alone and TARDIS over it; status every 1 s")
  private Integer outageFor;

  @Option(
      names = "--app-processes",
      paramLabel = "N",
      description =
          "instead: each configuration with 1, 2, ... N YCSB client processes at once (N at "
              + "most 8), each with its own Dendrite (PartitionedDendrite over DENDRITE_ZOOKEEPER); "
              + "throughput side by side and forwarded operations per operation, in report-"
              + "processes.md")
  private Integer appProcesses;

  @Option(
      names = "--db-cpus",
      paramLabel = "F",
      description =
          "run every configuration twice: first as usual (every process shares the machine), "
              + "then with the database server (MariaDB; FerretDB too when a mongodb configuration "
              + "runs) in a cgroup CPU quota of F cores (a positive decimal: 0.25, 1, 1.5), so that "
              + "the database is the bottleneck as on a server of its own (the CPR paper's regime); "
              + "report.md shows both regimes side by side, each × alone against the database alone "
              + "in the same regime. Needs a writable cgroup (v2 cpu.max or v1 cpu.cfs_quota_us); the"
              + " database is moved back out and the cgroup removed on exit")
  private String databaseCpus;

  @Spec private CommandSpec spec;

  private BenchMain() {}

  public static void main(String[] argv) {
    System.exit(commandLine().execute(argv));
  }

  /**
   * The command line {@code main} runs: a wrong option prints "dev/bench: " and what is wrong, then the usage, and
   * exits with 2; the usage ends with the configurations this environment knows.
   */
  static CommandLine commandLine() {
    CommandLine commandLine =
        new CommandLine(new BenchMain())
            .setOverwrittenOptionsAllowed(true) // the last of a repeated option counts
            .setParameterExceptionHandler(
                (e, argv) -> {
                  e.getCommandLine().getErr().println("dev/bench: " + e.getMessage());
                  e.getCommandLine().usage(e.getCommandLine().getErr());
                  return CommandLine.ExitCode.USAGE;
                });
    commandLine
        .getCommandSpec()
        .usageMessage()
        .footer(
            "%nKnown configurations: " + knownNames(known(System.getenv("DENDRITE_MYSQL_URL"))));
    return commandLine;
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    Bench.Plan plan;
    try {
      plan =
          plan(known(mysqlUrl(System.getenv("DENDRITE_MYSQL_URL"), mysqlDriver)), System.getenv());
      if (appProcesses != null && (appProcesses < 1 || appProcesses > 8)) {
        throw new IllegalArgumentException("--app-processes must be 1 to 8, got " + appProcesses);
      }
      if (appProcesses != null && plan.outage().isPresent()) {
        throw new IllegalArgumentException("--app-processes runs no outage: leave out --outage-at");
      }
      if (appProcesses != null && plan.databaseCpuCap().isPresent()) {
        throw new IllegalArgumentException(
            "--app-processes runs in one regime: leave out --db-cpus");
      }
    } catch (IllegalArgumentException e) {
      // What is wrong with the options is told as picocli tells a malformed one: the message, then
      // the usage.
      throw new ParameterException(spec.commandLine(), e.getMessage(), e);
    }
    try {
      if (appProcesses != null) {
        String zooKeeper = System.getenv("DENDRITE_ZOOKEEPER");
        if (zooKeeper == null) {
          System.err.println(
              "dev/bench: --app-processes needs DENDRITE_ZOOKEEPER (dev/services env)");
          return CommandLine.ExitCode.USAGE;
        }
        AppProcessesBench.run(plan, appProcesses, zooKeeper);
        return CommandLine.ExitCode.OK;
      }
      Bench.Outcome outcome = Bench.run(plan, System.out);
      return outcome.failures().isEmpty() ? CommandLine.ExitCode.OK : 1;
    } catch (IOException e) {
      // A load that fails (database down, binding missing) leaves nothing to compare: say why and
      // stop.
      System.err.println("dev/bench: " + e.getMessage());
      return 1;
    }
  }

  /** Every configuration this environment's databases allow, the MySQL ones through {@code mysqlUrl}. */
  private static List<Configuration> known(String mysqlUrl) {
    return Configurations.standard(
        mysqlUrl,
        System.getenv("DENDRITE_MONGO_URL"),
        Path.of(System.getenv().getOrDefault("DENDRITE_SERVICES_DIR", "target/services")));
  }

  /**
   * {@code url} (a {@code jdbc:mysql:} or {@code jdbc:mariadb:} URL, or null when MySQL is not configured) with
   * the scheme of {@code driver} ({@code --mysql-driver}: mariadb or connector-j). The database alone and every
   * Dendrite over it get the same driver, so the ratios compare the cache tier, not two drivers.
   */
  static String mysqlUrl(String url, String driver) {
    String scheme =
        switch (driver) {
          case "mariadb" -> "jdbc:mariadb:";
          case "connector-j" -> "jdbc:mysql:";
          default ->
              throw new IllegalArgumentException(
                  "--mysql-driver is mariadb or connector-j, got " + driver);
        };
    if (url == null) {
      return null;
    }
    for (String known : List.of("jdbc:mysql:", "jdbc:mariadb:")) {
      if (url.startsWith(known)) {
        return scheme + url.substring(known.length());
      }
    }
    throw new IllegalArgumentException(
        "DENDRITE_MYSQL_URL must start with jdbc:mysql: or jdbc:mariadb:");
  }

  /**
   * The plan the parsed options describe; {@code env} names the cgroup of {@code --db-cpus}
   * ({@code DENDRITE_DB_CGROUP}, {@code DENDRITE_DB_CGROUP_ROOT}, set by {@code dev/bench}).
   */
  Bench.Plan plan(List<Configuration> known, Map<String, String> env) throws IOException {
    Optional<Outage> outage = Optional.empty();
    if (outageAt != null || outageFor != null) {
      if (outageAt == null || outageFor == null) {
        throw new IllegalArgumentException("--outage-at and --outage-for go together");
      }
      outage = Optional.of(new Outage(outageAt, outageFor));
    }
    Optional<DatabaseCpuCap> databaseCpuCap = Optional.empty();
    if (databaseCpus != null) {
      databaseCpuCap =
          Optional.of(DatabaseCpuCap.fromEnvironment(DatabaseCpuCap.parseCpus(databaseCpus), env));
    }

    List<String> defaults =
        quick
            ? QUICK_CONFIGS
            : outage.isPresent()
                ? names(
                    known.stream()
                        .filter(c -> c.databaseAlone() || c.policy().equals(Configurations.TARDIS))
                        .toList())
                : names(Configurations.byDefault(known));
    List<Configuration> chosen = new ArrayList<>();
    for (String name : listed(configs, defaults)) {
      chosen.add(
          known.stream()
              .filter(c -> c.name().equals(name))
              .findFirst()
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "unknown configuration "
                              + name
                              + " (known: "
                              + String.join(", ", names(known))
                              + "; a database's configurations need its DENDRITE_*_URL)")));
    }
    // The database alone loads the data and is what every ratio divides by: add it when left out.
    for (Configuration c : List.copyOf(chosen)) {
      known.stream()
          .filter(
              k ->
                  k.databaseAlone()
                      && k.database().name().equals(c.database().name())
                      && !chosen.contains(k))
          .findFirst()
          .ifPresent(k -> chosen.add(0, k));
    }
    List<Workload> chosenWorkloads = new ArrayList<>();
    for (String name : listed(workloads, quick ? QUICK_WORKLOADS : ALL_WORKLOADS)) {
      Path file = workloadsDir.resolve(name);
      if (!Files.isRegularFile(file)) {
        throw new IllegalArgumentException("no workload file " + file);
      }
      chosenWorkloads.add(Workload.read(file));
    }
    List<String> argv = spec.commandLine().getParseResult().originalArgs();
    return new Bench.Plan(
        chosen,
        chosenWorkloads,
        workloadsDir.resolve("load"),
        records != null ? records : quick ? 20_000 : 100_000,
        seconds != null ? seconds : quick ? 20 : 60,
        warmup != null ? warmup : quick ? 5 : 10,
        threads,
        iqServers,
        // The phases of an outage are told apart by the status lines: one a second.
        statusInterval != null ? statusInterval : outage.isPresent() ? 1 : 10,
        properties,
        System.getProperty("java.class.path"),
        System.getenv().getOrDefault("DENDRITE_MEMCACHED_BIN", "memcached"),
        ResultsDirectory.create(output, LocalDate.now()),
        "dev/bench" + (argv.isEmpty() ? "" : " " + String.join(" ", argv)),
        outage,
        databaseCpuCap);
  }

  /** The names an option listed (blanks between commas dropped), or {@code fallback} without the option. */
  private static List<String> listed(List<String> option, List<String> fallback) {
    return option == null
        ? fallback
        : option.stream().map(String::strip).filter(s -> !s.isEmpty()).toList();
  }

  private static String knownNames(List<Configuration> known) {
    return known.isEmpty()
        ? "none (a database's configurations need its DENDRITE_*_URL, as dev/services env prints them)"
        : String.join(", ", names(known));
  }

  private static List<String> names(List<Configuration> configs) {
    return configs.stream().map(Configuration::name).toList();
  }
}
