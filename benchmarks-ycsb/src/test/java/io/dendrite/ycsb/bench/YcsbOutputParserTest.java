package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class YcsbOutputParserTest {

  private static final List<String> OUTPUT =
      List.of(
          "some binding log line, not a measurement",
          "[OVERALL], RunTime(ms), 3004",
          "[OVERALL], Throughput(ops/sec), 1234.5",
          "[TOTAL_GCS_G1_Young_Generation], Count, 9",
          "[TOTAL_GC_TIME_%], Time(%), 1.1651131824234355",
          "[READ], Operations, 1000",
          "[READ], AverageLatency(us), 210.5",
          "[READ], MinLatency(us), 100",
          "[READ], MaxLatency(us), 4075",
          "[READ], 95thPercentileLatency(us), 300",
          "[READ], 99thPercentileLatency(us), 900",
          "[READ], Return=OK, 998",
          "[READ], Return=NOT_FOUND, 2",
          "[CLEANUP], Operations, 2",
          "[CLEANUP], 95thPercentileLatency(us), 3",
          "[SCAN], Operations, 500",
          "[SCAN], AverageLatency(us), 1500.25",
          "[SCAN], 95thPercentileLatency(us), 2000",
          "[SCAN], 99thPercentileLatency(us), 5000",
          "[SCAN], Return=OK, 500",
          "[UPDATE-FAILED], Operations, 3",
          "[UPDATE-FAILED], 95thPercentileLatency(us), 10",
          "[UPDATE], Operations, 40",
          "[UPDATE], Return=OK, 40",
          "[UPDATE], Return=ERROR, 3");

  @Test
  void readsOverallAndEveryOperationButCleanupAndGc() {
    YcsbResult r = YcsbOutputParser.parse(OUTPUT);

    assertThat(r.runTimeMillis()).isEqualTo(3004);
    assertThat(r.throughput()).isEqualTo(1234.5);
    assertThat(r.operations()).containsOnlyKeys("READ", "SCAN", "UPDATE-FAILED", "UPDATE");
    YcsbResult.OperationStats read = r.operations().get("READ");
    assertThat(read.operations()).isEqualTo(1000);
    assertThat(read.averageLatencyUs()).isEqualTo(210.5);
    assertThat(read.p95LatencyUs()).isEqualTo(300);
    assertThat(read.p99LatencyUs()).isEqualTo(900);
    assertThat(read.returns()).containsEntry("OK", 998L).containsEntry("NOT_FOUND", 2L);
    assertThat(r.operations().get("SCAN").p99LatencyUs()).isEqualTo(5000);
    assertThat(r.operations().get("UPDATE").averageLatencyUs()).isNaN();
  }

  @Test
  void countsEveryReturnThatIsNotOkAsFailed() {
    assertThat(YcsbOutputParser.parse(OUTPUT).failedOperations()).isEqualTo(2 + 3);
  }

  @Test
  void outputWithoutOverallThroughputIsAnUnfinishedRun() {
    assertThatThrownBy(() -> YcsbOutputParser.parse(List.of("[READ], Operations, 3")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("did not finish");
  }

  @Test
  void aMeasurementThatIsNotANumberIsNamed() {
    assertThatThrownBy(
            () -> YcsbOutputParser.parse(List.of("[OVERALL], Throughput(ops/sec), lots")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[OVERALL], Throughput(ops/sec), lots");
  }

  @Test
  void readsStatusLines() {
    String line =
        "2026-11-21 15:43:03:760 20 sec: 5703678 operations; 4304787.64 current ops/sec; "
            + "est completion in 34 seconds [READ: Count=2160266, Max=4041, Min=0, Avg=0, 90=0, 99=0]";
    assertThat(YcsbOutputParser.status(line))
        .contains(new YcsbOutputParser.Status(20, 5703678, 4304787.64, Map.of("READ", 2160266L)));
    assertThat(
            YcsbOutputParser.status(
                    "2026-11-25 04:00:01:001 7 sec: 900 operations; 120 current ops/sec; [READ:"
                        + " Count=50, Max=9, Min=1, Avg=2, 90=3, 99=4] [UPDATE-FAILED: Count=12,"
                        + " Max=1000, Min=990, Avg=995, 90=999, 99=1000] [UPDATE: Count=3, Max=5]")
                .orElseThrow()
                .intervalCounts())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("READ", 50L, "UPDATE-FAILED", 12L, "UPDATE", 3L));
    assertThat(
            YcsbOutputParser.status(
                "2026-11-21 15:43:01:760 0 sec: 0 operations; est completion in 0 second"))
        .contains(new YcsbOutputParser.Status(0, 0, 0));
    assertThat(YcsbOutputParser.status("Loading workload...")).isEmpty();
  }
}
