package io.dendrite.testsupport.charts;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;

/**
 * The benchmarks' one way of drawing a chart: an XChart line chart of one size, written as PNG. {@code dev/bench}'s
 * report plots and the TARDIS recovery sweep both draw through it; the caller adds the series and styles the rest
 * (legend, log axis) on the chart. XChart is an optional dependency of this module: a module that draws declares
 * {@code org.knowm.xchart:xchart} itself.
 */
public final class LineCharts {

  static {
    // Charts are drawn off screen; without this a machine with no display refuses to load AWT.
    System.setProperty("java.awt.headless", "true");
  }

  private static final int WIDTH = 900;
  private static final int HEIGHT = 560;

  private LineCharts() {}

  /** An empty chart with its title and axis titles. */
  public static XYChart create(String title, String xAxisTitle, String yAxisTitle) {
    return new XYChartBuilder()
        .width(WIDTH)
        .height(HEIGHT)
        .title(title)
        .xAxisTitle(xAxisTitle)
        .yAxisTitle(yAxisTitle)
        .build();
  }

  /** Writes {@code chart} to {@code png}, creating its directory. */
  public static void writePng(XYChart chart, Path png) throws IOException {
    Files.createDirectories(png.toAbsolutePath().getParent());
    try (OutputStream out = Files.newOutputStream(png)) {
      BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
    }
  }
}
