package io.dendrite.tardis;

import io.dendrite.tardis.TardisRecoveryProbe.Result;
import io.dendrite.testsupport.charts.LineCharts;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.XYChart;

/**
 * The thesis' Figure 4.7 from {@link TardisRecoveryProbe}'s sweep, as PNG ({@link LineCharts}, as {@code dev/bench}'s
 * plots): recovery duration (a) and the foreground throughput during recovery (b) against the number of AR workers,
 * one series per technique, distribution and α. The run without workers has no α, so it starts every α's series of
 * its technique and distribution.
 */
final class RecoverySweepPlot {

  private RecoverySweepPlot() {}

  /** Figure 4.7.a: runs that did not finish within {@code capSeconds} are left out (their table row says so). */
  static void recoveryVsWorkers(List<Result> results, int capSeconds, Path png) throws IOException {
    LineCharts.writePng(
        chart(
            results,
            "TARDIS recovery duration against AR workers (runs past the "
                + capSeconds
                + " s cap left out)",
            "recovery duration (s, log scale)",
            true,
            Result::recoverySeconds),
        png);
  }

  /** Figure 4.7.b: operations/s of the foreground threads (workload A) from restore to the end of recovery. */
  static void throughputVsWorkers(List<Result> results, Path png) throws IOException {
    LineCharts.writePng(
        chart(
            results,
            "Foreground throughput during recovery against AR workers",
            "workload A ops/s during recovery",
            false,
            Result::recoveryOps),
        png);
  }

  private static XYChart chart(
      List<Result> results,
      String title,
      String yLabel,
      boolean logY,
      ToDoubleFunction<Result> value) {
    XYChart chart = LineCharts.create(title, "AR workers", yLabel);
    // Durations span a decade or two: label the axis between the powers of ten too.
    chart.getStyler().setYAxisLogarithmic(logY).setYAxisLogarithmicDecadeOnly(false);
    Map<String, List<Result>> series = new LinkedHashMap<>();
    for (Result r : results) {
      if (r.workers() > 0) {
        series
            .computeIfAbsent(
                r.technique() + " " + r.distribution() + " α=" + r.alpha() + " batch=" + r.batch(),
                k -> new ArrayList<>())
            .add(r);
      }
    }
    series.forEach(
        (name, points) -> {
          Result first = points.get(0);
          results.stream()
              .filter(
                  r ->
                      r.workers() == 0
                          && r.technique() == first.technique()
                          && r.distribution().equals(first.distribution()))
              .findFirst()
              .ifPresent(points::add);
          List<Result> drawn =
              points.stream()
                  .filter(r -> !Double.isNaN(value.applyAsDouble(r)))
                  .sorted(Comparator.comparingInt(Result::workers))
                  .toList();
          if (!drawn.isEmpty()) {
            chart.addSeries(
                name,
                drawn.stream().mapToDouble(Result::workers).toArray(),
                drawn.stream().mapToDouble(value).toArray());
          }
        });
    return chart;
  }
}
