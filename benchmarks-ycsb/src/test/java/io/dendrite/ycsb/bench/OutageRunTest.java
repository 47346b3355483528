package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.ycsb.bench.OutageRun.Phase;
import io.dendrite.ycsb.bench.YcsbOutputParser.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutageRunTest {

  @TempDir Path directory;

  @Test
  void splitsTheStatusLinesIntoBeforeDuringAndAfterTheOutage() {
    OutageRun run = run(Optional.empty());

    assertThat(run.successesPerSecond(Phase.BEFORE)).hasValue(200);
    assertThat(run.successesPerSecond(Phase.DURING)).hasValue(45);
    assertThat(run.successesPerSecond(Phase.AFTER))
        .as("the line past the run is cleanup")
        .hasValue(200);
    assertThat(run.failures("UPDATE", Phase.BEFORE)).isZero();
    assertThat(run.failures("UPDATE", Phase.DURING)).isEqualTo(22);
    assertThat(run.failures("READ", Phase.DURING)).isZero();
    assertThat(run.failures("UPDATE")).isEqualTo(22);
    assertThat(run.successes("UPDATE")).isEqualTo(400);
    assertThat(run.recoverySeconds()).as("nothing buffered: no recovery to time").isEmpty();
  }

  @Test
  void readsTheBindingsOutageStatsAndTimesRecoveryFromTheRestore() throws Exception {
    Path file = directory.resolve("stats.properties");
    Files.writeString(
        file,
        String.join(
            "\n",
            "binding=tardis",
            "verify.recordsChecked=2000",
            "verify.lostWrites=0",
            "tardis.failedAtMs=9000",
            "tardis.normalAtMs=13500",
            "tardis.peakBuffered=1234",
            "tardis.failedWritesAbsorbed=5000",
            "tardis.backlog=9000\\:0,10000\\:1234,11000\\:600"));

    OutageStats stats = OutageStats.read(file);

    assertThat(stats.recordsChecked()).hasValue(2000);
    assertThat(stats.lostWrites()).hasValue(0);
    assertThat(stats.skipped()).isEmpty();
    assertThat(stats.peakBuffered()).hasValue(1234);
    assertThat(stats.absorbed()).hasValue(5000);
    assertThat(stats.backlog())
        .containsExactly(
            new OutageStats.BacklogSample(9000, 0),
            new OutageStats.BacklogSample(10000, 1234),
            new OutageStats.BacklogSample(11000, 600));
    assertThat(run(Optional.of(stats)).recoverySeconds()).hasValue(3.5);
  }

  /** Outage from 2 s to 4 s of a 6 s run, one status line a second. */
  private static OutageRun run(Optional<OutageStats> stats) {
    List<Status> statuses =
        List.of(
            new Status(0, 0, 0),
            new Status(1, 200, 200, Map.of("READ", 100L, "UPDATE", 100L)),
            new Status(2, 400, 200, Map.of("READ", 100L, "UPDATE", 100L)),
            new Status(3, 460, 60, Map.of("READ", 50L, "UPDATE-FAILED", 10L)),
            new Status(4, 512, 52, Map.of("READ", 40L, "UPDATE-FAILED", 12L)),
            new Status(5, 712, 200, Map.of("READ", 100L, "UPDATE", 100L)),
            new Status(6, 912, 200, Map.of("READ", 100L, "UPDATE", 100L)),
            new Status(9, 912, 0, Map.of("READ", 0L)));
    YcsbResult ycsb =
        new YcsbResult(
            6000,
            152,
            Map.of(
                "READ",
                new YcsbResult.OperationStats(490, 1, 2, 3, Map.of("OK", 490L)),
                "UPDATE",
                new YcsbResult.OperationStats(
                    422, 1, 2, 3, Map.of("OK", 400L, "SERVICE_UNAVAILABLE", 22L))));
    return new OutageRun(
        Fixtures.ALONE,
        Fixtures.cpr(10),
        new Outage(2, 2),
        6,
        statuses,
        OptionalLong.of(8000),
        OptionalLong.of(10_000 - 2000),
        OptionalLong.of(10_000),
        ycsb,
        stats);
  }
}
