package io.dendrite.ycsb.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/** Runs and configurations made up for the report tests. */
final class Fixtures {

  static final Database MYSQL = Database.withoutReset("mysql");
  static final Configuration ALONE = config("mysql", Configuration.ALONE, Configuration.Cache.NONE);
  static final Configuration WRITE_BACK =
      config("mysql-write-back", "write-back", Configuration.Cache.IQ_SERVERS);
  static final Configuration WRITE_THROUGH =
      config("mysql-write-through", "write-through", Configuration.Cache.IQ_SERVERS);

  private Fixtures() {}

  static Configuration config(String name, String policy, Configuration.Cache cache) {
    return new Configuration(name, MYSQL, policy, "site.ycsb.BasicDB", Map.of(), cache);
  }

  static Workload cpr(int scanPercent) {
    return new Workload(
        "cpr-star-" + scanPercent,
        Path.of("cpr-star-" + scanPercent),
        scanPercent,
        false,
        Workload.ALL_FIELDS);
  }

  /** A 20 s run whose second half is 1.2 times as fast as the whole run, as a JVM warming up makes it. */
  static RunResult run(
      Configuration c, Workload w, double throughput, Optional<BindingStats> stats) {
    return run(c, w, throughput, throughput * 1.2, stats);
  }

  static RunResult run(
      Configuration c,
      Workload w,
      double throughput,
      double steadyThroughput,
      Optional<BindingStats> stats) {
    long atHalf = Math.round(throughput * 20 - steadyThroughput * 10);
    long atEnd = Math.round(throughput * 20);
    List<YcsbOutputParser.Status> statuses =
        List.of(
            new YcsbOutputParser.Status(0, 0, 0),
            new YcsbOutputParser.Status(10, atHalf, atHalf / 10.0),
            new YcsbOutputParser.Status(20, atEnd, steadyThroughput),
            new YcsbOutputParser.Status(20, atEnd + 3, 30)); // the line YCSB prints at shutdown
    return run(
        c, w, throughput, stats, statuses, Optional.of(cpu(c)), Optional.of(databaseWork(c)));
  }

  /**
   * A run with no status line after its start, as one shorter than YCSB's status interval; its CPU figures
   * lack the database's (no pid file) and the machine's (no /proc/stat), its database work counts statements
   * only (as MongoDB's).
   */
  static RunResult tooShortForSteady(Configuration c, Workload w, double throughput) {
    CpuUsage partial =
        new CpuUsage(
            2000,
            OptionalDouble.of(600),
            OptionalDouble.of(400),
            OptionalDouble.empty(),
            OptionalDouble.empty());
    DatabaseWork statementsOnly =
        new DatabaseWork(2000, OptionalLong.of(1000), OptionalLong.empty(), OptionalLong.empty());
    return run(
        c,
        w,
        throughput,
        Optional.empty(),
        List.of(new YcsbOutputParser.Status(0, 0, 0)),
        Optional.of(partial),
        Optional.of(statementsOnly));
  }

  /**
   * 2 000 operations on 0.6 s of client CPU, 0.4 s of cache servers (none for the database alone) and 1 s of
   * database (0.25 s behind a cache): 300/200/500 µs per operation, 1 000 in all (300/200/125 = 625).
   */
  static CpuUsage cpu(Configuration c) {
    boolean alone = c.cache() == Configuration.Cache.NONE;
    return new CpuUsage(
        2000,
        OptionalDouble.of(600),
        OptionalDouble.of(alone ? 0 : 400),
        OptionalDouble.of(alone ? 1000 : 250),
        OptionalDouble.of(87.5));
  }

  /**
   * Over the same 2 000 operations, 3 000 statements, 2 000 commits and 500 fsyncs of the database alone (1.5,
   * 1 and 0.25 per operation); 500, 600 and 100 behind a cache (0.25, 0.3 and 0.05).
   */
  static DatabaseWork databaseWork(Configuration c) {
    boolean alone = c.cache() == Configuration.Cache.NONE;
    return new DatabaseWork(
        2000,
        OptionalLong.of(alone ? 3000 : 500),
        OptionalLong.of(alone ? 2000 : 600),
        OptionalLong.of(alone ? 500 : 100));
  }

  /** {@code r} as run in {@code regime}, its raw output named as {@link Bench} names a capped run's. */
  static RunResult in(Regime regime, RunResult r) {
    return new RunResult(
        r.configuration(),
        r.workload(),
        r.threads(),
        r.records(),
        r.seconds(),
        regime,
        r.ycsb(),
        r.stats(),
        r.pinned(),
        r.statuses(),
        r.cpu(),
        r.databaseWork(),
        r.rawOutput().replace(".out", regime.fileSuffix() + ".out"));
  }

  private static RunResult run(
      Configuration c,
      Workload w,
      double throughput,
      Optional<BindingStats> stats,
      List<YcsbOutputParser.Status> statuses,
      Optional<CpuUsage> cpu,
      Optional<DatabaseWork> databaseWork) {
    YcsbResult ycsb =
        new YcsbResult(
            20_000,
            throughput,
            Map.of(
                "SCAN", new YcsbResult.OperationStats(900, 1500, 2000, 5000, Map.of("OK", 900L)),
                "UPDATE",
                    new YcsbResult.OperationStats(
                        100, 800, 1200, 3000, Map.of("OK", 99L, "ERROR", 1L))));
    List<PinnedSample> pinned =
        c.writeBack()
            ? List.of(new PinnedSample(0, 0, 0), new PinnedSample(1, 4096, 9000))
            : List.of();
    return new RunResult(
        c,
        w,
        4,
        20_000,
        20,
        Regime.SHARED,
        ycsb,
        stats,
        pinned,
        statuses,
        cpu,
        databaseWork,
        "raw/" + c.name() + "__" + w.name() + ".out");
  }

  static BindingStats stats(long anomalies) {
    return new BindingStats(
        "dendrite",
        Map.of("SCAN", 900L, "UPDATE", 100L),
        Map.of("SCAN", 900L, "UPDATE", 400L),
        Map.of("SCAN", 900L, "UPDATE", 200L),
        Map.of("SCAN", 90L, "UPDATE", 0L),
        anomalies,
        4500,
        java.util.OptionalLong.of(3),
        java.util.OptionalLong.of(97));
  }
}
