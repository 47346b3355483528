package io.dendrite.ycsb.bench;

import io.dendrite.iq.bench.ProcCpu;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.UnaryOperator;

/**
 * Runs every configuration on every workload in one invocation and writes the report: loads each
 * database once with its database-alone binding, warms it up, then for each run starts fresh cache
 * servers, warms the cache up, measures (following the CPU of the client, the cache servers, the database
 * server and the machine meanwhile, and the database server's own count of its statements, commits and
 * fsyncs), stops the servers, and finally writes {@code results.csv},
 * {@code report.md} and the plots next to the raw YCSB output.
 */
public final class Bench {

  /**
   * What to run.
   *
   * @param loadWorkload the property file the databases are loaded with (record layout of every workload)
   * @param warmupSeconds per database after the load, and per run of a cached configuration before it
   * @param classpath for the YCSB and IQ server child JVMs
   * @param command the command line as the user typed it, for the report
   * @param outage the database cut in every measured run, if any ({@code --outage-at}, {@code --outage-for})
   * @param databaseCpuCap with {@code --db-cpus}: every configuration runs twice, first with the database server
   *     sharing the machine, then with it in this cgroup CPU quota
   */
  public record Plan(
      List<Configuration> configurations,
      List<Workload> workloads,
      Path loadWorkload,
      long records,
      int seconds,
      int warmupSeconds,
      int threads,
      int iqServers,
      int statusIntervalSeconds,
      Map<String, String> extraProperties,
      String classpath,
      String memcachedBinary,
      Path outputDir,
      String command,
      Optional<Outage> outage,
      Optional<DatabaseCpuCap> databaseCpuCap) {

    public Plan {
      configurations = List.copyOf(configurations);
      workloads = List.copyOf(workloads);
      extraProperties = Map.copyOf(extraProperties);
      positive("records", records);
      positive("seconds", seconds);
      positive("threads", threads);
      positive("iqServers", iqServers);
      positive("statusIntervalSeconds", statusIntervalSeconds);
      if (warmupSeconds < 0) {
        throw new IllegalArgumentException("warmupSeconds must not be negative: " + warmupSeconds);
      }
      Objects.requireNonNull(outage, "outage");
      Objects.requireNonNull(databaseCpuCap, "databaseCpuCap");
      if (outage.isPresent() && databaseCpuCap.isPresent()) {
        throw new IllegalArgumentException(
            "--db-cpus runs no outage: leave out --outage-at and --outage-for");
      }
      if (outage.isPresent() && outage.get().endSeconds() >= seconds) {
        throw new IllegalArgumentException(
            "the outage must end before the run does: it ends "
                + outage.get().endSeconds()
                + " s into a run of "
                + seconds
                + " s, which leaves no time to recover");
      }
      if (configurations.isEmpty() || workloads.isEmpty()) {
        throw new IllegalArgumentException(
            "a run needs at least one configuration and one workload");
      }
      for (Configuration c : configurations) {
        if (alone(configurations, c.database().name()).isEmpty()) {
          throw new IllegalArgumentException(
              "configuration "
                  + c.name()
                  + " needs the "
                  + c.database().name()
                  + "-alone configuration in the same run: it loads the database and is what the ratio divides by");
        }
      }
    }

    /** Shared, then, with {@code --db-cpus}, the database capped. */
    public List<Regime> regimes() {
      return databaseCpuCap
          .map(c -> List.of(Regime.SHARED, Regime.capped(c.cpus())))
          .orElse(List.of(Regime.SHARED));
    }

    private static void positive(String what, long value) {
      if (value <= 0) {
        throw new IllegalArgumentException(what + " must be positive: " + value);
      }
    }
  }

  /**
   * The rows of the report, the runs that did not finish, and where it was all written; with an outage, each
   * measured run's phases as well.
   */
  public record Outcome(
      List<ReportRow> rows, List<String> failures, Path outputDir, List<OutageRun> outageRuns) {}

  private final Plan plan;
  private final PrintStream console;
  final Path raw;
  private final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
  private final long startNanos = System.nanoTime();
  private final List<String> failures = new ArrayList<>();
  private final List<OutageRun> outageRuns = new ArrayList<>();
  private final OptionalLong clockTicksPerSecond = ProcCpu.clockTicksPerSecond();

  /** With {@code --db-cpus}: how the cap was set and how often it held the database back, for the report. */
  private final List<String> capFacts = new ArrayList<>();

  /** YCSB client JVMs started so far, to name each one's files ({run} in DENDRITE_BENCH_CLIENT_JVM_OPTS). */
  private int clientJvms;

  /** A bench for {@code plan}; {@link AppProcessesBench} runs its own runs with this one's steps. */
  Bench(Plan plan, PrintStream console) throws IOException {
    this.plan = plan;
    this.console = console;
    this.raw = Files.createDirectories(plan.outputDir().resolve("raw"));
    if (clockTicksPerSecond.isEmpty()) {
      warn("`getconf CLK_TCK` gave no clock tick rate: the CPU times per operation will be n/a");
    }
  }

  public static Outcome run(Plan plan, PrintStream console)
      throws IOException, InterruptedException {
    return new Bench(plan, console).run();
  }

  private Outcome run() throws IOException, InterruptedException {
    // Looked up before the load, so that a missing pid file fails the invocation at once.
    List<Long> cappedPids =
        plan.databaseCpuCap().isPresent()
            ? DatabaseCpuCap.serverPids(
                plan.configurations().stream().map(Configuration::database).toList())
            : List.of();
    Map<String, Configuration> databases = new LinkedHashMap<>();
    plan.configurations()
        .forEach(
            c ->
                databases.putIfAbsent(
                    c.database().name(),
                    alone(plan.configurations(), c.database().name()).orElseThrow()));
    for (Configuration alone : databases.values()) {
      load(alone);
      if (plan.warmupSeconds() > 0) {
        measureOrWarm(
            alone,
            plan.workloads().get(0),
            List.of(),
            plan.warmupSeconds(),
            "warmup-" + alone.name(),
            false,
            UnaryOperator.identity(),
            pid -> {},
            ignored -> {});
      }
    }
    Set<String> insertedInto = new HashSet<>();
    List<RunResult> results = new ArrayList<>();
    List<Regime> regimes = plan.regimes();
    int total = plan.configurations().size() * plan.workloads().size() * regimes.size();
    int n = 0;
    for (Regime regime : regimes) {
      Optional<DatabaseCpuCap> cap = regime.capped() ? plan.databaseCpuCap() : Optional.empty();
      Optional<DatabaseCpuCap.Throttling> before = Optional.empty();
      if (cap.isPresent()) {
        try {
          cap.get().attach(cappedPids);
        } catch (IOException e) {
          // Without the cap its runs would measure the shared regime again: report the shared one
          // alone.
          failures.add(regime.label() + ": " + e.getMessage());
          say("FAILED: %s", e.getMessage());
          release(cap.get(), cappedPids);
          continue;
        }
        before = cap.get().throttling();
        say("%s: pids %s in %s", regime.label(), cappedPids, cap.get().describe());
      }
      try {
        for (Configuration config : plan.configurations()) {
          for (Workload workload : plan.workloads()) {
            n++;
            String db = config.database().name();
            if (workload.inserts() && !insertedInto.add(db)) {
              // a second run inserting the same ordered keys would find them taken
              load(databases.get(db));
            }
            say(
                "run %d/%d: %s on %s%s",
                n,
                total,
                config.name(),
                workload.name(),
                regimes.size() > 1 ? ", " + regime.label() : "");
            try {
              runOne(config, workload, regime).ifPresent(results::add);
            } catch (IOException | RuntimeException e) {
              failures.add(
                  config.name()
                      + " on "
                      + workload.name()
                      + (regimes.size() > 1 ? ", " + regime.label() : "")
                      + ": "
                      + e.getMessage());
              say("FAILED: %s", e.getMessage());
            }
          }
        }
      } finally {
        if (cap.isPresent()) {
          String fact = "CPU quota (--db-cpus " + regime.cores() + "): " + cap.get().describe();
          Optional<DatabaseCpuCap.Throttling> after = cap.get().throttling();
          if (before.isPresent() && after.isPresent()) {
            fact += "; " + after.get().since(before.get()).describe() + " over its runs";
          }
          capFacts.add(fact);
          say("database %s", fact);
          release(cap.get(), cappedPids);
        }
      }
    }
    return report(results);
  }

  /** Moves the database servers out of the cap; dev/bench moves whatever stays there out on exit. */
  private void release(DatabaseCpuCap cap, List<Long> pids) {
    try {
      cap.detach(pids);
      say("database pids %s back in %s", pids, cap.root());
    } catch (IOException e) {
      warn(e.getMessage() + " (dev/bench moves them out on exit)");
    }
  }

  void load(Configuration alone) throws IOException, InterruptedException {
    say("loading %d records into %s", plan.records(), alone.database().name());
    try {
      alone.database().reset().run();
    } catch (Exception e) {
      throw new IOException(
          "cannot empty " + alone.database().name() + " before loading: " + e.getMessage(), e);
    }
    List<String> command = command(alone, "-load", plan.loadWorkload(), props(alone, List.of()));
    String id = "load-" + alone.database().name();
    List<String> out =
        YcsbChild.run(
            command,
            raw.resolve(id + ".out"),
            raw.resolve(id + ".err"),
            Duration.ofHours(2),
            pid -> {},
            s -> progress(id, "", s));
    YcsbResult result = YcsbOutputParser.parse(out);
    YcsbResult.OperationStats inserts = result.operations().get("INSERT");
    long loaded = inserts == null ? 0 : inserts.returns().getOrDefault("OK", 0L);
    if (loaded != plan.records()) {
      // YCSB exits with 0 even when the binding cannot be loaded at all: count what was inserted.
      throw new IOException(
          "loaded "
              + loaded
              + " of "
              + plan.records()
              + " records into "
              + alone.database().name()
              + firstError(raw.resolve(id + ".err")));
    }
  }

  private Optional<RunResult> runOne(Configuration config, Workload workload, Regime regime)
      throws IOException, InterruptedException {
    String id = config.name() + "__" + workload.name() + regime.fileSuffix();
    List<ServerProcess> servers = startCache(config, id);
    OutageProxy proxy = null;
    try {
      if (plan.outage().isPresent()) {
        proxy = OutageProxy.inFrontOf(config);
      }
      OutageProxy outageProxy = proxy;
      UnaryOperator<Map<String, String>> routed =
          proxy == null ? UnaryOperator.identity() : proxy::route;
      if (config.cache() != Configuration.Cache.NONE && plan.warmupSeconds() > 0) {
        measureOrWarm(
            config,
            workload,
            servers,
            plan.warmupSeconds(),
            id + ".warmup",
            false,
            routed,
            pid -> {},
            ignored -> {});
      }
      PinnedMemoryPoller poller = config.writeBack() ? new PinnedMemoryPoller(servers) : null;
      // Added to by YcsbChild's stderr thread, read here once the child is gone.
      List<YcsbOutputParser.Status> statuses = new CopyOnWriteArrayList<>();
      String run = config.name() + " on " + workload.name() + regime.qualifier();
      CpuMeter cpu =
          new CpuMeter(
              run,
              servers.stream().map(ServerProcess::pid).toList(),
              config.database(),
              clockTicksPerSecond,
              this::warn);
      DatabaseWorkMeter databaseWork = new DatabaseWorkMeter(run, config.database(), this::warn);
      List<String> out;
      try {
        out =
            measureOrWarm(
                config,
                workload,
                servers,
                plan.seconds(),
                id,
                true,
                routed,
                cpu::clientStarted,
                s -> {
                  if (outageProxy != null) {
                    outageProxy.workloadStarted(plan.outage().get());
                  }
                  statuses.add(s);
                  cpu.sample(s);
                  databaseWork.sample(s);
                });
      } finally {
        databaseWork.close();
        if (poller != null) {
          poller.stop();
        }
      }
      List<PinnedSample> pinned = poller == null ? List.of() : poller.stop();
      YcsbResult ycsb = YcsbOutputParser.parse(out);
      if (ycsb.operations().values().stream().mapToLong(YcsbResult.OperationStats::operations).sum()
          == 0) {
        throw new IOException("no operation completed" + firstError(raw.resolve(id + ".err")));
      }
      Path statsFile = raw.resolve(id + ".stats.properties");
      Optional<BindingStats> stats =
          Files.exists(statsFile) ? Optional.of(BindingStats.read(statsFile)) : Optional.empty();
      say(
          "  %s on %s%s: %,.0f ops/s, %d failed%s",
          config.name(),
          workload.name(),
          regime.qualifier(),
          ycsb.throughput(),
          ycsb.failedOperations(),
          stats
              .map(s -> ", " + s.anomalies() + " anomalies in " + s.rowReadsChecked() + " rows")
              .orElse(""));
      if (proxy != null) {
        outageRuns.add(
            new OutageRun(
                config,
                workload,
                plan.outage().get(),
                plan.seconds(),
                statuses,
                proxy.startedAtMillis(),
                proxy.cutAtMillis(),
                proxy.restoredAtMillis(),
                ycsb,
                Files.exists(statsFile)
                    ? Optional.of(OutageStats.read(statsFile))
                    : Optional.empty()));
      }
      return Optional.of(
          new RunResult(
              config,
              workload,
              plan.threads(),
              plan.records(),
              plan.seconds(),
              regime,
              ycsb,
              stats,
              pinned,
              statuses,
              cpu.usage(),
              databaseWork.work(cpu.window()),
              plan.outputDir().relativize(raw.resolve(id + ".out")).toString()));
    } finally {
      if (proxy != null) {
        proxy.close();
      }
      servers.forEach(ServerProcess::close);
    }
  }

  /**
   * Runs YCSB; its pid goes to {@code onStart}, its status lines to the console and to {@code onStatus}. {@code
   * routed} points the binding at the database through the outage proxy, if there is one.
   */
  private List<String> measureOrWarm(
      Configuration config,
      Workload workload,
      List<ServerProcess> servers,
      int seconds,
      String id,
      boolean measured,
      UnaryOperator<Map<String, String>> routed,
      LongConsumer onStart,
      Consumer<YcsbOutputParser.Status> onStatus)
      throws IOException, InterruptedException {
    Map<String, String> props = new LinkedHashMap<>(routed.apply(props(config, servers)));
    if (plan.outage().isPresent()) {
      // Every configuration waits as long for the database: a write waits 1 s, not the default 10
      // s,
      // before it fails (or, with TARDIS, is buffered instead).
      props.putIfAbsent("db.timeoutms", "1000");
      // After the run, the database must hold every acknowledged write; the history must be whole
      // to
      // tell.
      props.put("dendrite.verifydatabase", String.valueOf(measured));
      props.putIfAbsent("dendrite.checkedevents", "5000000");
    }
    if (!measured && workload.scanPercent() > 0 && workload.scanPercent() < 100) {
      // A warm-up of a workload that scans runs its scans alone (same start and length
      // distributions), so that the measured run finds its ranges cached, as a long-running
      // service does: at 10 % scan, 20 000 uniform 5-row ranges take longer to meet once than a run
      // lasts, and the run would measure cold misses.
      props.putAll(SCANS_ONLY);
    }
    props.put("maxexecutiontime", String.valueOf(seconds));
    props.put("dendrite.checkanomalies", String.valueOf(measured));
    // Check every record, so the hot keys of a zipfian workload (where look-aside goes stale) are
    // among them.
    props.putIfAbsent("dendrite.checkedrecords", String.valueOf(plan.records()));
    props.put("dendrite.statsfile", raw.resolve(id + ".stats.properties").toString());
    List<String> command = command(config, "-t", workload.file(), props);
    String label = measured ? config.name() : config.name() + " (warm-up)";
    return YcsbChild.run(
        command,
        raw.resolve(id + ".out"),
        raw.resolve(id + ".err"),
        Duration.ofSeconds(seconds + 600L),
        onStart,
        s -> {
          progress(label, workload.name(), s);
          onStatus.accept(s);
        });
  }

  List<ServerProcess> startCache(Configuration config, String id)
      throws IOException, InterruptedException {
    List<ServerProcess> servers = new ArrayList<>();
    try {
      switch (config.cache()) {
        case IQ_SERVERS -> {
          for (int i = 0; i < plan.iqServers(); i++) {
            servers.add(
                ServerProcess.iqServer(
                    java,
                    plan.classpath(),
                    "512m",
                    "256m",
                    raw.resolve(id + ".iq-server-" + i + ".log")));
          }
        }
        case MEMCACHED ->
            servers.add(
                ServerProcess.memcached(
                    plan.memcachedBinary(), "512", raw.resolve(id + ".memcached.log")));
        case NONE -> {}
      }
    } catch (IOException | InterruptedException | RuntimeException e) {
      servers.forEach(ServerProcess::close);
      throw e;
    }
    return servers;
  }

  /** The mix of a warm-up of a workload that scans: its scans alone. */
  private static final Map<String, String> SCANS_ONLY =
      Map.of(
          "scanproportion", "1",
          "readproportion", "0",
          "updateproportion", "0",
          "insertproportion", "0",
          "readmodifywriteproportion", "0");

  /** The near cache bound of the Dendrite runs unless {@code -p dendrite.nearcachebytes=} says otherwise. */
  static final long NEAR_CACHE_BYTES = 512L << 20;

  Map<String, String> props(Configuration config, List<ServerProcess> servers) {
    Map<String, String> props = new LinkedHashMap<>(config.properties());
    props.putAll(plan.extraProperties());
    props.put("recordcount", String.valueOf(plan.records()));
    props.put("status.interval", String.valueOf(plan.statusIntervalSeconds()));
    String addresses = String.join(",", servers.stream().map(ServerProcess::address).toList());
    switch (config.cache()) {
      case IQ_SERVERS -> {
        props.put("dendrite.servers", addresses);
        // The binding's default (Dendrite's, 64 MiB) holds only part of 20 000 records' 5-row
        // results (about 100 MB encoded): the benchmark sizes the near cache to the data, as a
        // deployment would, unless the command says otherwise.
        props.putIfAbsent("dendrite.nearcachebytes", String.valueOf(NEAR_CACHE_BYTES));
      }
      case MEMCACHED -> props.put("memcached.servers", addresses);
      case NONE -> {}
    }
    return props;
  }

  List<String> command(
      Configuration config, String phase, Path workloadFile, Map<String, String> props) {
    List<String> command = new ArrayList<>(List.of(java, "-Xmx2g"));
    // Only the YCSB client's JVM: e.g. a flight recording of the client (JAVA_TOOL_OPTIONS would
    // reach the IQ server processes too, and their startup banner check). {run} names this JVM, so
    // each gets its file.
    String clientOptions =
        System.getenv().getOrDefault("DENDRITE_BENCH_CLIENT_JVM_OPTS", "").strip();
    if (!clientOptions.isEmpty()) {
      String run =
          String.format("%02d-%s-%s", ++clientJvms, config.name(), workloadFile.getFileName());
      command.addAll(List.of(clientOptions.replace("{run}", run).split("\\s+")));
    }
    command.addAll(
        List.of(
            "-cp",
            plan.classpath(),
            "site.ycsb.Client",
            phase,
            "-db",
            config.bindingClass(),
            "-P",
            workloadFile.toString(),
            "-threads",
            String.valueOf(plan.threads()),
            "-s"));
    props.forEach((k, v) -> command.addAll(List.of("-p", k + "=" + v)));
    return command;
  }

  private Outcome report(List<RunResult> results) throws IOException {
    List<ReportRow> rows = ReportRow.of(results);
    Path dir = plan.outputDir();
    List<String> plots = new ArrayList<>();
    Set<String> databases = new java.util.LinkedHashSet<>();
    results.forEach(r -> databases.add(r.configuration().database().name()));
    List<Regime> regimes = results.stream().map(RunResult::regime).distinct().toList();
    for (Regime regime : regimes) {
      List<ReportRow> regimeRows =
          rows.stream().filter(r -> r.result().regime().equals(regime)).toList();
      for (String db : databases) {
        for (String shape : List.of(Workload.ALL_FIELDS, Workload.ONE_FIELD)) {
          String file =
              "improvement-"
                  + db
                  + "-"
                  + (shape.equals(Workload.ALL_FIELDS) ? "all-fields" : "one-field")
                  + regime.fileSuffix()
                  + ".png";
          if (PlotWriter.improvementVsScan(
              regimeRows, db, shape, regime.qualifier(), dir.resolve(file))) {
            plots.add(file);
          }
        }
      }
    }
    Map<String, List<PinnedSample>> pinned = new LinkedHashMap<>();
    results.stream()
        .filter(r -> r.configuration().writeBack())
        .forEach(
            r ->
                pinned.put(
                    r.configuration().name()
                        + " "
                        + r.workload().name()
                        + (r.regime().capped() ? " " + r.regime().label() : ""),
                    r.pinned()));
    if (PlotWriter.pinnedMemory(pinned, dir.resolve("pinned-memory.png"))) {
      plots.add("pinned-memory.png");
    }
    ReportWriter.writeCsv(rows, dir.resolve("results.csv"));
    ReportWriter.writeMarkdown(
        rows,
        new ReportWriter.Header(plan.command(), machineFacts(), plots, failures),
        dir.resolve("report.md"));
    say("report: %s", dir.resolve("report.md"));
    if (plan.outage().isPresent()) {
      OutageReport.write(
          outageRuns,
          new ReportWriter.Header(plan.command(), MachineFacts.collect(), List.of(), failures),
          dir);
      say("outage report: %s", dir.resolve(OutageReport.FILE));
    }
    return new Outcome(rows, List.copyOf(failures), dir, List.copyOf(outageRuns));
  }

  private List<String> machineFacts() {
    List<String> facts = new ArrayList<>(MachineFacts.collect());
    capFacts.forEach(f -> facts.add("Database " + f));
    return facts;
  }

  /** The first exception YCSB or the binding printed, so that the console says why a run did nothing. */
  private static String firstError(Path stderr) throws IOException {
    try (var lines = Files.lines(stderr)) {
      return lines
          .filter(l -> l.contains("Exception") || l.contains("Error"))
          .findFirst()
          .map(l -> ": " + l.strip() + " (see " + stderr + ")")
          .orElse("; see " + stderr);
    }
  }

  static Optional<Configuration> alone(List<Configuration> configurations, String database) {
    return configurations.stream()
        .filter(c -> c.databaseAlone() && c.database().name().equals(database))
        .findFirst();
  }

  private void progress(String config, String workload, YcsbOutputParser.Status s) {
    say(
        "  %-24s %-14s %4d s %12s ops/s",
        config,
        workload,
        s.elapsedSeconds(),
        String.format(Locale.ROOT, "%,.0f", s.currentOpsPerSecond()));
  }

  /** A figure the report leaves blank, said on the console so that the blank is explained. */
  private void warn(String message) {
    say("  WARNING: %s", message);
  }

  void say(String format, Object... args) {
    long elapsed = (System.nanoTime() - startNanos) / 1_000_000_000L;
    console.printf(
        Locale.ROOT,
        "[%3d:%02d] %s%n",
        elapsed / 60,
        elapsed % 60,
        String.format(Locale.ROOT, format, args));
    console.flush();
  }
}
