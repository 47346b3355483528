package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.dendrite.iq.bench.ProcCpu;
import io.dendrite.ycsb.bench.YcsbOutputParser.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The meter over real /proc, with this JVM standing in for the client, a cache server and the database server. */
class CpuMeterTest {

  private static final long ME = ProcessHandle.current().pid();

  @TempDir Path dir;

  private final List<String> warnings = new ArrayList<>();

  @BeforeEach
  void linux() {
    assertThat(Path.of("/proc/self/stat"))
        .as("these tests read Linux /proc, which the CPU columns of dev/bench need")
        .isReadable();
  }

  @Test
  void everyPartsCpuOverTheWindowBetweenTheFirstAndLastStatusLine() throws IOException {
    Path pidFile = Files.writeString(dir.resolve("mariadbd.pid"), ME + "\n");
    CpuMeter meter = meter(List.of(ME, ME), database(Optional.of(pidFile)));
    meter.clientStarted(ME);

    meter.sample(new Status(0, 0, 0));
    burnCpu(200);
    meter.sample(new Status(10, 1_000, 100));
    burnCpu(200);
    meter.sample(new Status(20, 3_000, 200));

    CpuUsage usage = meter.usage().orElseThrow();
    assertThat(usage.operations()).isEqualTo(3_000);
    double client = usage.clientMillis().getAsDouble();
    assertThat(client).isGreaterThanOrEqualTo(300); // 400 ms burnt, less a tick or two at each end
    // Both cache servers are this JVM: their sum is about twice its figure (the reads are
    // microseconds apart).
    assertThat(usage.cacheMillis().getAsDouble()).isCloseTo(2 * client, within(50.0));
    assertThat(usage.databaseMillis().getAsDouble()).isCloseTo(client, within(30.0));
    assertThat(usage.clientMicrosPerOperation().getAsDouble())
        .isCloseTo(client * 1000 / 3_000, within(1e-9));
    assertThat(usage.totalMicrosPerOperation().getAsDouble())
        .isCloseTo(
            (client + usage.cacheMillis().getAsDouble() + usage.databaseMillis().getAsDouble())
                * 1000
                / 3_000,
            within(1e-9));
    assertThat(usage.machineBusyPercent().getAsDouble()).isBetween(0.0, 100.0);
    assertThat(warnings).isEmpty();
  }

  @Test
  void aMissingPidFileLeavesTheDatabaseBlankAndSaysWhere() {
    Path pidFile = dir.resolve("ferretdb.pid");
    CpuMeter meter = meter(List.of(), database(Optional.of(pidFile)));
    meter.clientStarted(ME);

    meter.sample(new Status(0, 0, 0));
    meter.sample(new Status(3, 300, 100));

    CpuUsage usage = meter.usage().orElseThrow();
    assertThat(usage.databaseMillis()).isEmpty();
    assertThat(usage.totalMicrosPerOperation()).isEmpty();
    assertThat(usage.clientMillis()).isPresent();
    assertThat(usage.cacheMillis()).hasValue(0);
    assertThat(warnings)
        .singleElement()
        .asString()
        .contains(
            "CPU database figure n/a for mysql on cpr-star-10",
            pidFile.toAbsolutePath().toString());
  }

  @Test
  void aDatabaseWithoutAServerProcessIsBlankWithoutAWarning() {
    CpuMeter meter = meter(List.of(), Database.withoutReset("basicdb"));
    meter.clientStarted(ME);

    meter.sample(new Status(0, 0, 0));
    meter.sample(new Status(3, 300, 100));

    assertThat(meter.usage().orElseThrow().databaseMillis()).isEmpty();
    assertThat(warnings).isEmpty();
  }

  @Test
  void theWindowEndsAtTheLastLineAtWhichTheClientCouldStillBeRead() throws Exception {
    Process client = new ProcessBuilder("sleep", "60").start();
    CpuMeter meter = meter(List.of(), Database.withoutReset("basicdb"));
    meter.clientStarted(client.pid());
    Status start = new Status(0, 0, 0);
    Status lastReadable = new Status(10, 1_000, 100);
    meter.sample(start);
    meter.sample(lastReadable);

    client.destroy();
    assertThat(client.waitFor(10, TimeUnit.SECONDS)).isTrue();
    meter.sample(new Status(10, 1_003, 3)); // YCSB's final line, read after the client exited

    CpuUsage usage = meter.usage().orElseThrow();
    assertThat(usage.operations()).isEqualTo(1_000);
    assertThat(usage.clientMillis()).isPresent();
    CpuMeter.Window window = meter.window().orElseThrow();
    assertThat(window.first()).isSameAs(start);
    assertThat(window.last()).isSameAs(lastReadable);
    assertThat(warnings).isEmpty();
  }

  @Test
  void fewerThanTwoStatusLinesGiveNoFiguresAndAWarning() {
    CpuMeter meter = meter(List.of(), Database.withoutReset("basicdb"));
    meter.clientStarted(ME);
    meter.sample(new Status(0, 0, 0));

    assertThat(meter.usage()).isEmpty();
    assertThat(meter.window()).isEmpty();
    assertThat(warnings).singleElement().asString().contains("fewer than two status lines");
  }

  /** Keeps this JVM busy until /proc counts {@code millis} more of its CPU time. */
  private static void burnCpu(long millis) {
    long until =
        ProcCpu.processTicks(ME).orElseThrow()
            + millis * ProcCpu.clockTicksPerSecond().orElseThrow() / 1000;
    while (ProcCpu.processTicks(ME).orElseThrow() < until) {
      Thread.onSpinWait();
    }
  }

  private CpuMeter meter(List<Long> cachePids, Database database) {
    return new CpuMeter(
        "mysql on cpr-star-10", cachePids, database, ProcCpu.clockTicksPerSecond(), warnings::add);
  }

  private static Database database(Optional<Path> pidFile) {
    return new Database("mysql", () -> {}, pidFile, Optional.empty());
  }
}
