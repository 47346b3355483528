package io.dendrite.ycsb.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * {@code dev/bench}'s entry point: parses the options, picks the configurations and workloads and runs
 * {@link Bench}. The databases come from {@code DENDRITE_MYSQL_URL} and {@code DENDRITE_MONGO_URL} (as
 * {@code dev/services env} prints them); their server processes, whose CPU the report counts, from the pid
 * files under {@code DENDRITE_SERVICES_DIR} (default {@code target/services}, as for {@code dev/services}).
 */
public final class BenchMain {

  static final String USAGE =
      """
            Usage: dev/bench [options]
                   dev/bench --drain-statements [batches]   (one drained row's CPU with each MySQL driver)
              --quick               the 10-minute run: 20 000 records, 20 s per run, 5 s warm-up,
                                    mysql, its three Dendrite policies and look-aside on cpr-star-10, cpr-star-99, A
              --records N           records loaded per database (default 100000)
              --seconds T           measured seconds per run (default 60)
              --warmup W            warm-up seconds per database and per cached run (default 10)
              --threads K           YCSB client threads (default 4)
              --configs a,b,...     configurations (default: all); known: %s
              --workloads a,b,...   workload files in the workloads directory (default: all)
              --iq-servers N        IQ server processes per Dendrite run (default 2)
              --mysql-driver D      mariadb (default: MariaDB Connector/J, drains in its bulk protocol) or
                                    connector-j (MySQL Connector/J); the same driver for every MySQL configuration
              --status-interval S   seconds between progress lines (default 10)
              --workloads-dir DIR   default benchmarks-ycsb/workloads
              --output DIR          results root (default results); the report goes to DIR/<date>[-n]
              -p key=value          a property for every YCSB run (e.g. -p dendrite.drainthreads=4)
              --outage-at T         cut the database T s into every measured run (through a proxy in front of
                                    it) ...
              --outage-for S        ... for S s; then outage.md compares throughput before, during and after,
                                    failures, and whether the database holds every acknowledged write. Default
                                    configurations then: each database alone and TARDIS over it; status every 1 s
              --app-processes N     instead: each configuration with 1, 2, ... N YCSB client processes at once,
                                    each with its own Dendrite (PartitionedDendrite over DENDRITE_ZOOKEEPER);
                                    throughput side by side and forwarded operations per operation, in
                                    report-processes.md
              --db-cpus F           run every configuration twice: first as usual (every process shares the
                                    machine), then with the database server (MariaDB; FerretDB too when a mongodb
                                    configuration runs) in a cgroup CPU quota of F cores (a positive decimal:
                                    0.25, 1, 1.5), so that the database is the bottleneck as on a server of its
                                    own (the CPR paper's regime); report.md shows both regimes side by side, each
                                    × alone against the database alone in the same regime. Needs a writable
                                    cgroup (v2 cpu.max or v1 cpu.cfs_quota_us); the database is moved back out
                                    and the cgroup removed on exit
            """;

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

  private BenchMain() {}

  public static void main(String[] argv) throws IOException, InterruptedException {
    String mysqlUrl;
    try {
      mysqlUrl = mysqlUrl(System.getenv("DENDRITE_MYSQL_URL"), argv);
    } catch (IllegalArgumentException e) {
      System.err.println("dev/bench: " + e.getMessage());
      System.exit(2);
      return;
    }
    List<Configuration> known =
        Configurations.standard(
            mysqlUrl,
            System.getenv("DENDRITE_MONGO_URL"),
            Path.of(System.getenv().getOrDefault("DENDRITE_SERVICES_DIR", "target/services")));
    int appProcesses = 0;
    List<String> rest = new ArrayList<>();
    for (int i = 0; i < argv.length; i++) {
      if (argv[i].equals("--app-processes") && i + 1 < argv.length) {
        appProcesses = Integer.parseInt(argv[++i]);
      } else {
        rest.add(argv[i]);
      }
    }
    Bench.Plan plan;
    try {
      plan = plan(rest.toArray(String[]::new), known, System.getenv());
      if (appProcesses < 0 || appProcesses > 8) {
        throw new IllegalArgumentException("--app-processes must be 1 to 8, got " + appProcesses);
      }
      if (appProcesses > 0 && plan != null && plan.outage().isPresent()) {
        throw new IllegalArgumentException("--app-processes runs no outage: leave out --outage-at");
      }
      if (appProcesses > 0 && plan != null && plan.databaseCpuCap().isPresent()) {
        throw new IllegalArgumentException(
            "--app-processes runs in one regime: leave out --db-cpus");
      }
    } catch (IllegalArgumentException e) {
      System.err.println("dev/bench: " + e.getMessage());
      System.err.printf(USAGE, String.join(", ", names(known)));
      System.exit(2);
      return;
    }
    if (plan == null) {
      System.out.printf(USAGE, String.join(", ", names(known)));
      return;
    }
    if (appProcesses > 0) {
      String zooKeeper = System.getenv("DENDRITE_ZOOKEEPER");
      if (zooKeeper == null) {
        System.err.println(
            "dev/bench: --app-processes needs DENDRITE_ZOOKEEPER (dev/services env)");
        System.exit(2);
        return;
      }
      AppProcessesBench.run(plan, appProcesses, zooKeeper);
      return;
    }
    try {
      Bench.Outcome outcome = Bench.run(plan, System.out);
      System.exit(outcome.failures().isEmpty() ? 0 : 1);
    } catch (IOException e) {
      // A load that fails (database down, binding missing) leaves nothing to compare: say why and
      // stop.
      System.err.println("dev/bench: " + e.getMessage());
      System.exit(1);
    }
  }

  /**
   * {@code url} (a {@code jdbc:mysql:} or {@code jdbc:mariadb:} URL, or null when MySQL is not configured) with
   * the scheme of the driver {@code --mysql-driver} names. The database alone and every Dendrite over it get the
   * same driver, so the ratios compare the cache tier, not two drivers.
   */
  static String mysqlUrl(String url, String[] argv) {
    String driver = "mariadb";
    for (int i = 0; i + 1 < argv.length; i++) {
      if (argv[i].equals("--mysql-driver")) {
        driver = argv[i + 1];
      }
    }
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
   * The plan the options describe, or null for {@code --help}; {@code env} names the cgroup of {@code --db-cpus}
   * ({@code DENDRITE_DB_CGROUP}, {@code DENDRITE_DB_CGROUP_ROOT}, set by {@code dev/bench}).
   */
  static Bench.Plan plan(String[] argv, List<Configuration> known, Map<String, String> env)
      throws IOException {
    Map<String, String> options = new LinkedHashMap<>();
    Map<String, String> props = new LinkedHashMap<>();
    boolean quick = false;
    for (int i = 0; i < argv.length; i++) {
      String option = argv[i];
      if (option.equals("--help") || option.equals("-h")) {
        return null;
      }
      if (option.equals("--quick")) {
        quick = true;
        continue;
      }
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("missing value for " + option);
      }
      String value = argv[++i];
      if (option.equals("-p")) {
        int eq = value.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException("-p needs key=value, got " + value);
        }
        props.put(value.substring(0, eq), value.substring(eq + 1));
      } else if (List.of(
              "--records",
              "--seconds",
              "--warmup",
              "--threads",
              "--configs",
              "--workloads",
              "--iq-servers",
              "--status-interval",
              "--workloads-dir",
              "--output",
              "--outage-at",
              "--outage-for",
              "--db-cpus")
          .contains(option)) {
        options.put(option, value);
      } else if (option.equals("--mysql-driver")) {
        continue; // applied to the URL by main, before the configurations are built
      } else {
        throw new IllegalArgumentException("unknown option " + option);
      }
    }
    long records = number(options, "--records", quick ? 20_000 : 100_000);
    int seconds = (int) number(options, "--seconds", quick ? 20 : 60);
    int warmup = (int) number(options, "--warmup", quick ? 5 : 10);
    int threads = (int) number(options, "--threads", 4);
    int iqServers = (int) number(options, "--iq-servers", 2);
    Optional<Outage> outage = Optional.empty();
    if (options.containsKey("--outage-at") || options.containsKey("--outage-for")) {
      if (!options.containsKey("--outage-at") || !options.containsKey("--outage-for")) {
        throw new IllegalArgumentException("--outage-at and --outage-for go together");
      }
      outage =
          Optional.of(
              new Outage(
                  (int) number(options, "--outage-at", 0),
                  (int) number(options, "--outage-for", 0)));
    }
    Optional<DatabaseCpuCap> databaseCpuCap = Optional.empty();
    if (options.containsKey("--db-cpus")) {
      databaseCpuCap =
          Optional.of(
              DatabaseCpuCap.fromEnvironment(
                  DatabaseCpuCap.parseCpus(options.get("--db-cpus")), env));
    }
    // The phases of an outage are told apart by the status lines: one a second.
    int status = (int) number(options, "--status-interval", outage.isPresent() ? 1 : 10);
    Path workloadsDir =
        Path.of(options.getOrDefault("--workloads-dir", "benchmarks-ycsb/workloads"));

    List<String> defaults =
        quick
            ? QUICK_CONFIGS
            : outage.isPresent()
                ? names(
                    known.stream()
                        .filter(c -> c.databaseAlone() || c.policy().equals(Configurations.TARDIS))
                        .toList())
                : names(Configurations.byDefault(known));
    List<String> configNames = list(options, "--configs", defaults);
    List<Configuration> configs = new ArrayList<>();
    for (String name : configNames) {
      configs.add(
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
    for (Configuration c : List.copyOf(configs)) {
      known.stream()
          .filter(
              k ->
                  k.databaseAlone()
                      && k.database().name().equals(c.database().name())
                      && !configs.contains(k))
          .findFirst()
          .ifPresent(k -> configs.add(0, k));
    }
    List<Workload> workloads = new ArrayList<>();
    for (String name : list(options, "--workloads", quick ? QUICK_WORKLOADS : ALL_WORKLOADS)) {
      Path file = workloadsDir.resolve(name);
      if (!Files.isRegularFile(file)) {
        throw new IllegalArgumentException("no workload file " + file);
      }
      workloads.add(Workload.read(file));
    }
    Path output =
        ResultsDirectory.create(
            Path.of(options.getOrDefault("--output", "results")), LocalDate.now());
    String command = "dev/bench" + (argv.length == 0 ? "" : " " + String.join(" ", argv));
    return new Bench.Plan(
        configs,
        workloads,
        workloadsDir.resolve("load"),
        records,
        seconds,
        warmup,
        threads,
        iqServers,
        status,
        props,
        System.getProperty("java.class.path"),
        System.getenv().getOrDefault("DENDRITE_MEMCACHED_BIN", "memcached"),
        output,
        command,
        outage,
        databaseCpuCap);
  }

  private static long number(Map<String, String> options, String option, long fallback) {
    String value = options.get(option);
    if (value == null) {
      return fallback;
    }
    try {
      return Long.parseLong(value.replace("_", ""));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " needs a whole number, got " + value);
    }
  }

  private static List<String> list(
      Map<String, String> options, String option, List<String> fallback) {
    String value = options.get(option);
    return value == null
        ? fallback
        : Arrays.stream(value.split(","))
            .map(String::strip)
            .filter(s -> !s.isEmpty())
            .collect(Collectors.toList());
  }

  private static List<String> names(List<Configuration> configs) {
    return configs.stream().map(Configuration::name).toList();
  }
}
