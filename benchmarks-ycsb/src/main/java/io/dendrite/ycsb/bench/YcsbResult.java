package io.dendrite.ycsb.bench;

import java.util.Map;

/**
 * What one YCSB run printed at its end: overall throughput and, per operation type (READ, SCAN,
 * UPDATE, ...), its latencies and return codes.
 */
public record YcsbResult(
    long runTimeMillis, double throughput, Map<String, OperationStats> operations) {

  public YcsbResult {
    operations = Map.copyOf(operations);
  }

  /** Latencies in microseconds and the count of each return code, e.g. {@code OK -> 1234}. */
  public record OperationStats(
      long operations,
      double averageLatencyUs,
      double p95LatencyUs,
      double p99LatencyUs,
      Map<String, Long> returns) {

    public OperationStats {
      returns = Map.copyOf(returns);
    }

    /** Operations that returned anything but {@code OK}. */
    public long failed() {
      return returns.entrySet().stream()
          .filter(e -> !e.getKey().equals("OK"))
          .mapToLong(Map.Entry::getValue)
          .sum();
    }
  }

  /** Failed operations over all types, including YCSB's separate {@code [READ-FAILED]}-style sections. */
  public long failedOperations() {
    return operations.values().stream().mapToLong(OperationStats::failed).sum();
  }
}
