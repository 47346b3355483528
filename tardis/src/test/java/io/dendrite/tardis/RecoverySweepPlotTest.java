package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.tardis.TardisRecoveryProbe.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecoverySweepPlotTest {

  @TempDir Path dir;

  @Test
  void drawsBothFiguresOfASweepAsPngLeavingOutTheRunsThatDidNotFinish() throws IOException {
    List<Result> sweep =
        List.of(
            result(Technique.TARDIS, 0, 10, Double.NaN, 900), // past the cap: no duration
            result(Technique.TARDIS, 1, 10, 33.3, 1_200),
            result(Technique.TARDIS, 20, 10, 9.9, 1_500),
            result(Technique.DIS, 0, 10, Double.NaN, 800),
            result(Technique.DIS, 1, 10, 26.2, 1_100),
            result(Technique.DIS, 20, 10, 9.8, 1_400));
    Path recovery = dir.resolve("tardis-recovery-vs-workers.png");
    Path throughput = dir.resolve("tardis-throughput-vs-workers.png");

    RecoverySweepPlot.recoveryVsWorkers(sweep, 90, recovery);
    RecoverySweepPlot.throughputVsWorkers(sweep, throughput);

    for (Path png : List.of(recovery, throughput)) {
      // LineChartsTest decodes its PNG; tardis's tests, patched into its module, cannot reach
      // java.desktop.
      assertThat(new String(Files.readAllBytes(png), 1, 3, StandardCharsets.US_ASCII))
          .as(png.toString())
          .isEqualTo("PNG");
    }
  }

  private static Result result(
      Technique technique, int workers, int alpha, double recoverySeconds, double recoveryOps) {
    return new Result(
        technique,
        workers,
        alpha,
        alpha,
        "uniform",
        2_000,
        6_000,
        0,
        20,
        20,
        18_500,
        recoverySeconds,
        Double.isNaN(recoverySeconds) ? 40 : 0,
        recoveryOps);
  }
}
