package io.dendrite.ycsb.bench;

import io.dendrite.ycsb.bench.YcsbResult.OperationStats;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads YCSB's text output: the final {@code [SECTION], Metric, value} lines that {@code site.ycsb.Client}
 * prints to stdout, and the {@code -s} status lines it prints to stderr every status interval.
 */
public final class YcsbOutputParser {

  private static final Pattern MEASUREMENT =
      Pattern.compile("^\\[([A-Z0-9_%\\-]+)], ([^,]+), (.+)$");
  private static final Pattern STATUS =
      Pattern.compile(
          " (\\d+) sec: (\\d+) operations;(?: ([0-9.]+|NaN|Infinity) current ops/sec;)?");

  /** Sections that are not operations: JVM and GC figures, and the client's own cleanup calls. */
  private static final Pattern NOT_AN_OPERATION = Pattern.compile("OVERALL|CLEANUP|TOTAL_GC.*");

  private YcsbOutputParser() {}

  /**
   * One {@code -s} status line: seconds since the start, operations so far (failed ones included), rate over the
   * last interval, and the operations of each measurement in the last interval ({@code READ}: those that returned
   * OK, {@code READ-FAILED}: the others; YCSB's default HdrHistogram measurements print these counts).
   */
  public record Status(
      long elapsedSeconds,
      long operations,
      double currentOpsPerSecond,
      Map<String, Long> intervalCounts) {

    public Status {
      intervalCounts = Map.copyOf(intervalCounts);
    }

    public Status(long elapsedSeconds, long operations, double currentOpsPerSecond) {
      this(elapsedSeconds, operations, currentOpsPerSecond, Map.of());
    }
  }

  private static final Pattern INTERVAL_COUNT =
      Pattern.compile("\\[([A-Z][A-Z0-9_-]*): Count=(\\d+)");

  /**
   * Parses the lines YCSB printed on stdout. Lines that are not measurements (a binding's own
   * logging) are skipped.
   *
   * @throws IllegalArgumentException when the output has no {@code [OVERALL]} throughput (the run
   *     did not finish) or a measurement value is not a number
   */
  public static YcsbResult parse(List<String> lines) {
    Long runTime = null;
    Double throughput = null;
    Map<String, OperationBuilder> operations = new LinkedHashMap<>();
    for (String line : lines) {
      Matcher m = MEASUREMENT.matcher(line.strip());
      if (!m.matches()) {
        continue;
      }
      String section = m.group(1);
      String metric = m.group(2).strip();
      String value = m.group(3).strip();
      if (section.equals("OVERALL")) {
        if (metric.equals("RunTime(ms)")) {
          runTime = (long) number(line, value);
        } else if (metric.equals("Throughput(ops/sec)")) {
          throughput = number(line, value);
        }
        continue;
      }
      if (NOT_AN_OPERATION.matcher(section).matches()) {
        continue;
      }
      OperationBuilder op = operations.computeIfAbsent(section, s -> new OperationBuilder());
      switch (metric) {
        case "Operations" -> op.operations = (long) number(line, value);
        case "AverageLatency(us)" -> op.average = number(line, value);
        case "95thPercentileLatency(us)" -> op.p95 = number(line, value);
        case "99thPercentileLatency(us)" -> op.p99 = number(line, value);
        default -> {
          if (metric.startsWith("Return=")) {
            op.returns.merge(
                metric.substring("Return=".length()), (long) number(line, value), Long::sum);
          }
        }
      }
    }
    if (throughput == null) {
      throw new IllegalArgumentException(
          "YCSB output has no [OVERALL], Throughput(ops/sec) line: the run did not finish");
    }
    Map<String, OperationStats> stats = new LinkedHashMap<>();
    operations.forEach(
        (name, b) ->
            stats.put(name, new OperationStats(b.operations, b.average, b.p95, b.p99, b.returns)));
    return new YcsbResult(runTime == null ? 0 : runTime, throughput, stats);
  }

  /** Parses one stderr line; empty when it is not a status line. */
  public static Optional<Status> status(String line) {
    Matcher m = STATUS.matcher(line);
    if (!m.find()) {
      return Optional.empty();
    }
    double rate = m.group(3) == null ? 0 : Double.parseDouble(m.group(3));
    Map<String, Long> counts = new LinkedHashMap<>();
    Matcher count = INTERVAL_COUNT.matcher(line);
    while (count.find()) {
      counts.merge(count.group(1), Long.parseLong(count.group(2)), Long::sum);
    }
    return Optional.of(
        new Status(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), rate, counts));
  }

  private static double number(String line, String value) {
    try {
      return Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "YCSB output line has no number where one belongs: " + line);
    }
  }

  private static final class OperationBuilder {
    long operations;
    double average = Double.NaN;
    double p95 = Double.NaN;
    double p99 = Double.NaN;
    final Map<String, Long> returns = new LinkedHashMap<>();
  }
}
