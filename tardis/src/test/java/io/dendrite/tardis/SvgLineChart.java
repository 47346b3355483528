package io.dendrite.tardis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * A line chart written as plain SVG text: axes, ticks, one polyline with markers per series, a legend. Written by
 * hand rather than through XChart because XChart's SVG draws every glyph as an outline (half a megabyte for a chart
 * of a few points), and these charts are committed under {@code docs/}. The x ticks are the x values the series
 * have; the y axis is linear or, for durations spanning orders of magnitude, logarithmic.
 */
final class SvgLineChart {
  private static final String[] COLORS = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22"
  };
  private static final int WIDTH = 900;
  private static final int HEIGHT = 540;
  private static final int LEFT = 80;
  private static final int RIGHT = 680;
  private static final int TOP = 60;
  private static final int BOTTOM = 470;

  private record Series(String name, double[] x, double[] y) {}

  private final String title;
  private final String xLabel;
  private final String yLabel;
  private final boolean logY;
  private final List<Series> series = new ArrayList<>();

  SvgLineChart(String title, String xLabel, String yLabel, boolean logY) {
    this.title = title;
    this.xLabel = xLabel;
    this.yLabel = yLabel;
    this.logY = logY;
  }

  /** A series of points, drawn in the order given; on a log axis every y must be positive. */
  SvgLineChart add(String name, double[] x, double[] y) {
    if (x.length != y.length || x.length == 0) {
      throw new IllegalArgumentException(name + ": " + x.length + " x and " + y.length + " y");
    }
    series.add(new Series(name, x.clone(), y.clone()));
    return this;
  }

  void write(Path svg) throws IOException {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                + " font-family=\"sans-serif\" font-size=\"12\">%n",
            WIDTH,
            HEIGHT,
            WIDTH,
            HEIGHT));
    out.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    text(out, WIDTH / 2.0, 28, "middle", 15, title);
    if (series.isEmpty()) {
      text(out, (LEFT + RIGHT) / 2.0, (TOP + BOTTOM) / 2.0, "middle", 13, "nothing to draw");
    } else {
      axes(out);
      int index = 0;
      for (Series s : series) {
        String color = COLORS[index % COLORS.length];
        StringBuilder points = new StringBuilder();
        for (int i = 0; i < s.x.length; i++) {
          points.append(String.format(Locale.ROOT, "%.1f,%.1f ", px(s.x[i]), py(s.y[i])));
        }
        out.append(
            String.format(
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>%n",
                color, points.toString().strip()));
        for (int i = 0; i < s.x.length; i++) {
          out.append(
              String.format(
                  Locale.ROOT,
                  "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>%s: %s, %s</title></circle>%n",
                  px(s.x[i]),
                  py(s.y[i]),
                  color,
                  escape(s.name),
                  number(s.x[i]),
                  number(s.y[i])));
        }
        double legendY = TOP + 10 + index * 20;
        out.append(
            String.format(
                Locale.ROOT,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                RIGHT + 20,
                legendY,
                RIGHT + 44,
                legendY,
                color));
        text(out, RIGHT + 50, legendY + 4, "start", 12, s.name);
        index++;
      }
    }
    out.append("</svg>\n");
    Files.createDirectories(svg.toAbsolutePath().getParent());
    Files.writeString(svg, out);
  }

  private void axes(StringBuilder out) {
    out.append(
        String.format(
            "<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"black\"/>%n",
            LEFT, TOP, BOTTOM, RIGHT));
    for (double x : xTicks()) {
      out.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>%n",
              px(x),
              BOTTOM,
              px(x),
              BOTTOM + 5));
      text(out, px(x), BOTTOM + 20, "middle", 12, number(x));
    }
    for (double y : yTicks()) {
      out.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>%n",
              LEFT,
              py(y),
              RIGHT,
              py(y)));
      text(out, LEFT - 8, py(y) + 4, "end", 12, number(y));
    }
    text(out, (LEFT + RIGHT) / 2.0, BOTTOM + 45, "middle", 13, xLabel);
    out.append(
        String.format(
            Locale.ROOT,
            "<text x=\"22\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\""
                + " transform=\"rotate(-90 22 %.1f)\">%s</text>%n",
            (TOP + BOTTOM) / 2.0,
            (TOP + BOTTOM) / 2.0,
            escape(yLabel)));
  }

  private TreeSet<Double> xTicks() {
    TreeSet<Double> ticks = new TreeSet<>();
    series.forEach(s -> Arrays.stream(s.x).forEach(ticks::add));
    return ticks;
  }

  /** 1, 2, 5 per decade on a log axis; about six round steps on a linear one. */
  private List<Double> yTicks() {
    double low = yLow();
    double high = yHigh();
    List<Double> ticks = new ArrayList<>();
    if (logY) {
      for (double decade = low; decade <= high; decade *= 10) {
        for (double step : new double[] {1, 2, 5}) {
          if (decade * step <= high * 1.0001) {
            ticks.add(decade * step);
          }
        }
      }
      return ticks;
    }
    double raw = (high - low) / 6;
    double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    double step =
        raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
    for (double y = low; y <= high + step / 1000; y += step) {
      ticks.add(y);
    }
    return ticks;
  }

  private double yLow() {
    double min = series.stream().flatMapToDouble(s -> Arrays.stream(s.y)).min().orElse(1);
    return logY ? Math.pow(10, Math.floor(Math.log10(min))) : 0;
  }

  private double yHigh() {
    double max = series.stream().flatMapToDouble(s -> Arrays.stream(s.y)).max().orElse(1);
    if (logY) {
      return Math.pow(10, Math.ceil(Math.log10(max)));
    }
    double magnitude = Math.pow(10, Math.floor(Math.log10(max)));
    return Math.ceil(max / magnitude) * magnitude;
  }

  private double px(double x) {
    double low = xTicks().first();
    double high = xTicks().last();
    double span = high > low ? high - low : 1;
    return LEFT + 20 + (x - low) / span * (RIGHT - LEFT - 40);
  }

  private double py(double y) {
    double low = yLow();
    double high = yHigh();
    double share =
        logY
            ? (Math.log10(y) - Math.log10(low)) / (Math.log10(high) - Math.log10(low))
            : (y - low) / (high - low);
    return BOTTOM - share * (BOTTOM - TOP);
  }

  private static void text(
      StringBuilder out, double x, double y, String anchor, int size, String text) {
    out.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">%s</text>%n",
            x,
            y,
            anchor,
            size,
            escape(text)));
  }

  private static String number(double v) {
    return v == Math.rint(v)
        ? String.format(Locale.ROOT, "%,.0f", v)
        : String.format(Locale.ROOT, "%.2g", v);
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}
