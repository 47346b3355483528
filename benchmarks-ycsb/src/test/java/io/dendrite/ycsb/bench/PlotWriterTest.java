package io.dendrite.ycsb.bench;

import static io.dendrite.ycsb.bench.Fixtures.ALONE;
import static io.dendrite.ycsb.bench.Fixtures.WRITE_BACK;
import static io.dendrite.ycsb.bench.Fixtures.WRITE_THROUGH;
import static io.dendrite.ycsb.bench.Fixtures.cpr;
import static io.dendrite.ycsb.bench.Fixtures.run;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlotWriterTest {

  private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

  @TempDir Path dir;

  @Test
  void drawsImprovementAgainstScanPercentAsAPng() throws IOException {
    List<ReportRow> rows =
        ReportRow.of(
            List.of(
                run(ALONE, cpr(10), 1000, Optional.empty()),
                    run(ALONE, cpr(99), 3000, Optional.empty()),
                run(WRITE_BACK, cpr(10), 4000, Optional.empty()),
                    run(WRITE_BACK, cpr(99), 6000, Optional.empty()),
                run(WRITE_THROUGH, cpr(10), 900, Optional.empty()),
                    run(WRITE_THROUGH, cpr(99), 5000, Optional.empty())));
    Path png = dir.resolve("improvement.png");

    assertThat(PlotWriter.improvementVsScan(rows, "mysql", Workload.ALL_FIELDS, png)).isTrue();

    assertPng(png);
  }

  @Test
  void drawsNothingWhenThereIsNoRatioToPlot() throws IOException {
    List<ReportRow> rows = ReportRow.of(List.of(run(WRITE_BACK, cpr(10), 4000, Optional.empty())));
    Path png = dir.resolve("none.png");

    assertThat(PlotWriter.improvementVsScan(rows, "mysql", Workload.ALL_FIELDS, png)).isFalse();
    assertThat(
            PlotWriter.improvementVsScan(
                ReportRow.of(
                    List.of(
                        run(ALONE, cpr(10), 1, Optional.empty()),
                        run(WRITE_BACK, cpr(10), 2, Optional.empty()))),
                "mysql",
                Workload.ONE_FIELD,
                png))
        .isFalse();
    assertThat(png).doesNotExist();
  }

  @Test
  void drawsPinnedMemoryOverTime() throws IOException {
    Path png = dir.resolve("pinned.png");

    assertThat(
            PlotWriter.pinnedMemory(
                Map.of(
                    "mysql-write-back cpr-star-10",
                    List.of(
                        new PinnedSample(0, 0, 0),
                        new PinnedSample(1.0, 2048, 4096),
                        new PinnedSample(2.0, 1024, 4096))),
                png))
        .isTrue();
    assertPng(png);
    assertThat(PlotWriter.pinnedMemory(Map.of("run", List.of()), dir.resolve("empty.png")))
        .isFalse();
  }

  private static void assertPng(Path png) throws IOException {
    byte[] bytes = Files.readAllBytes(png);
    assertThat(bytes.length).isGreaterThan(1000);
    assertThat(Arrays.copyOf(bytes, 8)).isEqualTo(PNG_SIGNATURE);
  }
}
