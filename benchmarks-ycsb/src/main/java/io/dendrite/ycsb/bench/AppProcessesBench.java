package io.dendrite.ycsb.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code dev/bench --app-processes N}: the service shape of issue 15, side by side. For each workload and each count
 * of application processes from 1 to N, every configuration runs with that many YCSB client processes at once
 * against one database and (for Dendrite) one cache tier, each process with its own Dendrite: a {@code
 * PartitionedDendrite} whose ranges ZooKeeper ({@code DENDRITE_ZOOKEEPER}) spreads over the processes. Reports the
 * processes' summed throughput, its ratio to the database alone with as many processes, and per operation the
 * forwarded gets and writes (each one more round trip, to the range's owner) and the hits read directly from the
 * cache for ranges owned elsewhere, in {@code report-processes.md}. The consistency of many processes is checked
 * by {@code PartitionedDendriteIT} (the binding's own check sees one process's writes only, so it is off here).
 */
public final class AppProcessesBench {

  /** One configuration on one workload with some processes: what they did together. */
  record Row(
      String workload,
      String configuration,
      boolean databaseAlone,
      int processes,
      double opsPerSecond,
      double steadyOpsPerSecond,
      long operations,
      long failed,
      long forwarded,
      long directHits,
      long servedHere) {}

  private final Bench bench;
  private final Bench.Plan plan;
  private final String zooKeeper;

  private AppProcessesBench(Bench bench, Bench.Plan plan, String zooKeeper) {
    this.bench = bench;
    this.plan = plan;
    this.zooKeeper = zooKeeper;
  }

  /** Runs the plan with 1 to {@code processes} processes; returns the rows, also written to the report. */
  static List<Row> run(Bench.Plan plan, int processes, String zooKeeper)
      throws IOException, InterruptedException {
    AppProcessesBench runner = new AppProcessesBench(new Bench(plan, System.out), plan, zooKeeper);
    return runner.runAll(processes);
  }

  private List<Row> runAll(int processes) throws IOException, InterruptedException {
    List<Configuration> alone =
        plan.configurations().stream().filter(Configuration::databaseAlone).toList();
    for (Configuration database : alone) {
      bench.load(database);
    }
    List<Row> rows = new ArrayList<>();
    for (Workload workload : plan.workloads()) {
      if (workload.inserts()) {
        bench.say("skipping %s: its inserts would need a reload per run", workload.name());
        continue;
      }
      for (int n = 1; n <= processes; n++) {
        for (Configuration config : plan.configurations()) {
          bench.say("%s on %s with %d process(es)", config.name(), workload.name(), n);
          rows.add(runOne(config, workload, n));
          Row row = rows.get(rows.size() - 1);
          bench.say(
              "  %,.0f ops/s, %d failed, %.3f forwarded per operation",
              row.opsPerSecond(), row.failed(), perOperation(row.forwarded(), row));
        }
      }
    }
    Path report = plan.outputDir().resolve("report-processes.md");
    Files.writeString(report, markdown(rows));
    bench.say("report: %s", report);
    return rows;
  }

  private Row runOne(Configuration config, Workload workload, int processes)
      throws IOException, InterruptedException {
    String id = config.name() + "__" + workload.name() + "__" + processes + "p";
    List<ServerProcess> servers = bench.startCache(config, id);
    try {
      String service = "bench-" + id.replace("__", "-") + "-" + System.nanoTime();
      if (config.cache() != Configuration.Cache.NONE && plan.warmupSeconds() > 0) {
        launch(
            config,
            workload,
            servers,
            processes,
            plan.warmupSeconds(),
            id + ".warmup",
            service,
            new ArrayList<>());
      }
      List<List<YcsbOutputParser.Status>> statuses = new ArrayList<>();
      List<Path> stats =
          launch(config, workload, servers, processes, plan.seconds(), id, service, statuses);
      double steady = 0;
      for (List<YcsbOutputParser.Status> process : statuses) {
        steady += SteadyThroughput.of(process, plan.seconds()).orElse(Double.NaN);
      }
      double throughput = 0;
      long operations = 0;
      long failed = 0;
      for (int i = 0; i < processes; i++) {
        YcsbResult result =
            YcsbOutputParser.parse(Files.readAllLines(bench.raw.resolve(id + "-p" + i + ".out")));
        throughput += result.throughput();
        failed += result.failedOperations();
        operations +=
            result.operations().values().stream()
                .mapToLong(YcsbResult.OperationStats::operations)
                .sum();
      }
      return new Row(
          workload.name(),
          config.name(),
          config.databaseAlone(),
          processes,
          throughput,
          steady,
          operations,
          failed,
          sum(stats, "partitioned.forwardedGets") + sum(stats, "partitioned.forwardedWrites"),
          sum(stats, "partitioned.directHits"),
          sum(stats, "partitioned.servedHere"));
    } finally {
      servers.forEach(ServerProcess::close);
    }
  }

  /** Runs {@code processes} YCSB clients at once for {@code seconds}; returns their stats files. */
  private List<Path> launch(
      Configuration config,
      Workload workload,
      List<ServerProcess> servers,
      int processes,
      int seconds,
      String id,
      String service,
      List<List<YcsbOutputParser.Status>> statuses)
      throws IOException, InterruptedException {
    ExecutorService clients = Executors.newFixedThreadPool(processes);
    List<Future<List<String>>> running = new ArrayList<>();
    List<Path> stats = new ArrayList<>();
    try {
      for (int i = 0; i < processes; i++) {
        Map<String, String> props = new LinkedHashMap<>(bench.props(config, servers));
        props.put("maxexecutiontime", String.valueOf(seconds));
        props.put("dendrite.checkanomalies", "false");
        Path statsFile = bench.raw.resolve(id + "-p" + i + ".stats.properties");
        stats.add(statsFile);
        props.put("dendrite.statsfile", statsFile.toString());
        if (config.cache() == Configuration.Cache.IQ_SERVERS) {
          props.put("dendrite.zookeeper", zooKeeper);
          props.put("dendrite.service", service);
          props.put("dendrite.member", "p" + i);
          props.put("dendrite.processes", String.valueOf(processes));
        }
        List<String> command = bench.command(config, "-t", workload.file(), props);
        Path out = bench.raw.resolve(id + "-p" + i + ".out");
        Path err = bench.raw.resolve(id + "-p" + i + ".err");
        List<YcsbOutputParser.Status> mine = new CopyOnWriteArrayList<>();
        statuses.add(mine);
        running.add(
            clients.submit(
                () ->
                    YcsbChild.run(
                        command,
                        out,
                        err,
                        Duration.ofSeconds(seconds + 600L),
                        pid -> {},
                        mine::add)));
      }
      for (Future<List<String>> client : running) {
        try {
          client.get();
        } catch (java.util.concurrent.ExecutionException failed) {
          throw new IOException(failed.getCause().getMessage(), failed.getCause());
        }
      }
      return stats;
    } finally {
      clients.shutdownNow();
    }
  }

  private static long sum(List<Path> files, String key) throws IOException {
    long total = 0;
    for (Path file : files) {
      if (!Files.exists(file)) {
        continue;
      }
      Properties p = new Properties();
      try (InputStream in = Files.newInputStream(file)) {
        p.load(in);
      }
      total += Long.parseLong(p.getProperty(key, "0").strip());
    }
    return total;
  }

  private static double perOperation(long count, Row row) {
    return row.operations() == 0 ? 0 : (double) count / row.operations();
  }

  static String markdown(List<Row> rows) {
    StringBuilder out = new StringBuilder();
    out.append("# Application processes side by side\n\n")
        .append(
            "Each row: that many YCSB client processes at once; ops/s is their sum (whole run, and over"
                + " its second half, after the ranges settled), the ratio divides the second half's by the database"
                + " alone's with as many processes. Forwarded: gets and writes sent to the range's owner"
                + " (one round trip more each), per operation; direct hits: hits read from the cache for ranges"
                + " owned elsewhere, per operation.\n\n")
        .append(
            "| workload | configuration | processes | ops/s (whole run) | ops/s (second half) | × alone (second half) | failed | forwarded / op | direct hits / op | served as owner / op |\n")
        .append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Row row : rows) {
      double alone =
          rows.stream()
              .filter(
                  r ->
                      r.workload().equals(row.workload())
                          && r.processes() == row.processes()
                          && r.databaseAlone())
              .mapToDouble(Row::steadyOpsPerSecond)
              .findFirst()
              .orElse(Double.NaN);
      out.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %d | %,.0f | %,.0f | %.2f | %d | %.3f | %.3f | %.3f |%n",
              row.workload(),
              row.configuration(),
              row.processes(),
              row.opsPerSecond(),
              row.steadyOpsPerSecond(),
              row.steadyOpsPerSecond() / alone,
              row.failed(),
              perOperation(row.forwarded(), row),
              perOperation(row.directHits(), row),
              perOperation(row.servedHere(), row)));
    }
    return out.toString();
  }
}
