package io.dendrite.ycsb.bench;

import io.dendrite.testsupport.charts.LineCharts;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.style.Styler;

/** Draws the report's PNG charts ({@link LineCharts}). */
public final class PlotWriter {

  private PlotWriter() {}

  /**
   * % throughput improvement over the database alone against % scan, one series per policy, for the
   * CPR mixes of one database and one shape (like the CPR paper's Figures 1 and 6).
   *
   * @return whether there was anything to draw (no file is written otherwise)
   */
  public static boolean improvementVsScan(
      List<ReportRow> rows, String database, String shape, Path png) throws IOException {
    return improvementVsScan(rows, database, shape, "", png);
  }

  /** The same, {@code titleSuffix} appended to the chart's title (the regime, when not shared). */
  public static boolean improvementVsScan(
      List<ReportRow> rows, String database, String shape, String titleSuffix, Path png)
      throws IOException {
    Map<String, List<ReportRow>> byPolicy = new LinkedHashMap<>();
    rows.stream()
        .filter(
            r ->
                r.result().configuration().database().name().equals(database)
                    && r.result().workload().shape().equals(shape)
                    && !r.result().configuration().databaseAlone()
                    && r.improvementPercent().isPresent())
        .sorted(Comparator.comparingDouble(r -> r.result().workload().scanPercent()))
        .forEach(
            r ->
                byPolicy
                    .computeIfAbsent(r.result().configuration().name(), p -> new ArrayList<>())
                    .add(r));
    if (byPolicy.isEmpty()) {
      return false;
    }
    XYChart chart =
        LineCharts.create(
            "Throughput improvement over "
                + database
                + " alone, "
                + shape
                + ", scans of 5"
                + titleSuffix,
            "% scan (rest updates)",
            "% improvement over " + database + " alone");
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    byPolicy.forEach(
        (config, points) ->
            chart.addSeries(
                config,
                points.stream().mapToDouble(r -> r.result().workload().scanPercent()).toArray(),
                points.stream().mapToDouble(r -> r.improvementPercent().getAsDouble()).toArray()));
    LineCharts.writePng(chart, png);
    return true;
  }

  /**
   * Pinned bytes on the cache servers against seconds into the run, one series per write-back run.
   *
   * @return whether there was anything to draw (no file is written otherwise)
   */
  public static boolean pinnedMemory(Map<String, List<PinnedSample>> samplesByRun, Path png)
      throws IOException {
    Map<String, List<PinnedSample>> nonEmpty = new LinkedHashMap<>();
    samplesByRun.forEach(
        (run, samples) -> {
          if (!samples.isEmpty()) {
            nonEmpty.put(run, samples);
          }
        });
    if (nonEmpty.isEmpty()) {
      return false;
    }
    XYChart chart =
        LineCharts.create(
            "Pinned memory on the IQ servers during write-back runs (buffered writes and log records)",
            "seconds into the run",
            "pinned KiB (all servers)");
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    chart.getStyler().setMarkerSize(3);
    nonEmpty.forEach(
        (run, samples) ->
            chart.addSeries(
                run,
                samples.stream().mapToDouble(PinnedSample::seconds).toArray(),
                samples.stream().mapToDouble(s -> s.pinnedBytes() / 1024.0).toArray()));
    LineCharts.writePng(chart, png);
    return true;
  }

  /**
   * Operations that succeeded per second against seconds into the run, one series per configuration, for runs of
   * one workload with the database cut in the middle (the thesis' failed-mode against normal-mode throughput, over
   * time). Each point is one status interval.
   *
   * @return whether there was anything to draw (no file is written otherwise)
   */
  public static boolean outageThroughput(List<OutageRun> runs, Path png) throws IOException {
    List<OutageRun> drawn =
        runs.stream()
            .filter(r -> r.statuses().stream().anyMatch(s -> !s.intervalCounts().isEmpty()))
            .toList();
    if (drawn.isEmpty()) {
      return false;
    }
    Outage outage = drawn.get(0).outage();
    XYChart chart =
        LineCharts.create(
            drawn.get(0).workload().name()
                + ": successful operations/s, database cut from "
                + outage.atSeconds()
                + " s to "
                + outage.endSeconds()
                + " s",
            "seconds into the run",
            "operations/s that succeeded (per status interval)");
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    chart.getStyler().setMarkerSize(3);
    for (OutageRun run : drawn) {
      List<YcsbOutputParser.Status> points = new ArrayList<>();
      long previous = 0;
      for (YcsbOutputParser.Status s : run.statuses()) {
        // Past the run's length YCSB only waits for the binding's cleanup (the read-back).
        if (s.elapsedSeconds() > previous && s.elapsedSeconds() <= run.runSeconds()) {
          points.add(s);
        }
        previous = Math.max(previous, s.elapsedSeconds());
      }
      if (points.isEmpty()) {
        continue;
      }
      double[] x = new double[points.size()];
      double[] y = new double[points.size()];
      long from = 0;
      for (int i = 0; i < points.size(); i++) {
        YcsbOutputParser.Status s = points.get(i);
        x[i] = s.elapsedSeconds();
        long succeeded =
            s.intervalCounts().entrySet().stream()
                .filter(e -> !e.getKey().endsWith("-FAILED"))
                .mapToLong(Map.Entry::getValue)
                .sum();
        y[i] = (double) succeeded / (s.elapsedSeconds() - from);
        from = s.elapsedSeconds();
      }
      chart.addSeries(run.configuration().name(), x, y);
    }
    LineCharts.writePng(chart, png);
    return true;
  }
}
