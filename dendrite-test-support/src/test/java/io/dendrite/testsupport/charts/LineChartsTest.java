package io.dendrite.testsupport.charts;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.XYChart;

class LineChartsTest {

  @TempDir Path dir;

  @Test
  void drawsTheSeriesAsAPngOfTheReportsSizeInADirectoryItCreates() throws IOException {
    XYChart chart = LineCharts.create("recovery", "AR workers", "seconds (log scale)");
    chart.getStyler().setYAxisLogarithmic(true);
    chart.addSeries("TARDIS α=10", new double[] {1, 5, 20}, new double[] {33.3, 42.5, 9.9});
    Path png = dir.resolve("plots/recovery.png");

    LineCharts.writePng(chart, png);

    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image).isNotNull();
    assertThat(image.getWidth()).isEqualTo(900);
    assertThat(image.getHeight()).isEqualTo(560);
  }
}
