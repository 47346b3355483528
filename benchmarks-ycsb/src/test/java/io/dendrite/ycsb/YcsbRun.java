package io.dendrite.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.ycsb.bench.YcsbOutputParser;
import io.dendrite.ycsb.bench.YcsbResult;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * One run of YCSB's own {@code site.ycsb.Client} in a child JVM with this module's test classpath ({@code Client}
 * ends with {@code System.exit}), and what it reported: YCSB's status counts and the binding's stats file.
 */
final class YcsbRun {
  private static final Duration RUN_GUARD = Duration.ofMinutes(8);

  /** YCSB's final measurements, read by the runner's parser. */
  final YcsbResult result;

  /** The binding's stats file. */
  final Properties stats;

  final String output;

  private YcsbRun(YcsbResult result, Properties stats, String output) {
    this.result = result;
    this.stats = stats;
    this.output = output;
  }

  /**
   * Runs YCSB's load phase ({@code load}) or transaction phase, {@code binding} as the DB, with
   * {@code properties} as {@code -p} options and a fresh stats file in {@code directory}.
   */
  static YcsbRun run(
      Path directory, boolean load, Class<?> binding, int threads, Map<String, String> properties)
      throws IOException, InterruptedException {
    Path statsFile = Files.createTempFile(directory, binding.getSimpleName(), ".properties");
    Files.delete(statsFile);
    Map<String, String> all = new LinkedHashMap<>();
    all.put("workload", "site.ycsb.workloads.CoreWorkload");
    all.put("insertorder", "ordered");
    all.put(InstrumentedDB.STATS_FILE, statsFile.toString());
    all.putAll(properties);
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m",
                "-cp",
                System.getProperty("java.class.path"),
                "site.ycsb.Client",
                load ? "-load" : "-t",
                "-db",
                binding.getName(),
                "-threads",
                Integer.toString(threads)));
    all.forEach(
        (name, value) -> {
          command.add("-p");
          command.add(name + "=" + value);
        });
    Path log = Files.createTempFile(directory, "ycsb", ".log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    // Only a guard against a hung run: runs are sized by operation count, and FerretDB's range
    // finds (a whole-table read each) fell to 4 operations per second with two soaks beside it (400
    // operations: over 180 s).
    if (!process.waitFor(RUN_GUARD.toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(
          "YCSB did not finish within " + RUN_GUARD.toSeconds() + " s:\n" + Files.readString(log));
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as("YCSB's exit status; its output:\n%s", output).isZero();
    assertThat(statsFile).as("the stats file; YCSB's output:\n%s", output).exists();
    Properties stats = new Properties();
    try (Reader reader = Files.newBufferedReader(statsFile)) {
      stats.load(reader);
    }
    try {
      return new YcsbRun(YcsbOutputParser.parse(output.lines().toList()), stats, output);
    } catch (IllegalArgumentException unfinished) {
      throw new AssertionError(unfinished.getMessage() + "; YCSB's output:\n" + output, unfinished);
    }
  }

  /** How many {@code operation}s returned {@code status} ("OK", "NOT_FOUND", ...). */
  long returned(String operation, String status) {
    YcsbResult.OperationStats stats = result.operations().get(operation);
    return stats == null ? 0 : stats.returns().getOrDefault(status, 0L);
  }

  /** How many {@code operation}s YCSB ran. */
  long operations(String operation) {
    YcsbResult.OperationStats stats = result.operations().get(operation);
    return stats == null ? 0 : stats.operations();
  }

  long stat(String name) {
    String value = stats.getProperty(name);
    assertThat(value).as("stats entry %s in %s", name, stats).isNotNull();
    return Long.parseLong(value);
  }

  /** Every status YCSB counted is OK (NOT_FOUND too for reads, when {@code notFoundAllowed}). */
  void assertOnlyOk(boolean notFoundAllowed) {
    result
        .operations()
        .forEach(
            (operation, stats) ->
                stats
                    .returns()
                    .forEach(
                        (status, count) -> {
                          if (!status.equals("OK")
                              && !(notFoundAllowed && status.equals("NOT_FOUND"))) {
                            throw new AssertionError(
                                "YCSB counted "
                                    + count
                                    + " "
                                    + operation
                                    + " Return="
                                    + status
                                    + "; output:\n"
                                    + output);
                          }
                        }));
  }

  /** The union of {@code parts}, later ones overriding earlier ones: a run's {@code -p} properties. */
  @SafeVarargs
  static Map<String, String> with(Map<String, String>... parts) {
    Map<String, String> all = new LinkedHashMap<>();
    for (Map<String, String> part : parts) {
      all.putAll(part);
    }
    return all;
  }
}
