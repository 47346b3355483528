package io.dendrite.ycsb.bench;

import java.nio.file.Path;
import java.util.Properties;

/**
 * A YCSB workload property file and what the report needs from it.
 *
 * @param shape {@code YCSB*} or {@code YCSB¹} for the CPR mixes (files named {@code cpr-star-<f>} and
 *     {@code cpr-one-<f>}), empty for the others; the improvement plots have one chart per shape
 */
public record Workload(String name, Path file, double scanPercent, boolean inserts, String shape) {

  public static final String ALL_FIELDS = "YCSB*";
  public static final String ONE_FIELD = "YCSB¹";

  /** Reads {@code file}; its name is the workload's name. */
  public static Workload read(Path file) {
    Properties p = PropertiesFiles.load(file, "workload");
    String name = file.getFileName().toString();
    String shape =
        name.startsWith("cpr-star-") ? ALL_FIELDS : name.startsWith("cpr-one-") ? ONE_FIELD : "";
    return new Workload(
        name,
        file,
        100 * proportion(p, file, "scanproportion"),
        proportion(p, file, "insertproportion") > 0,
        shape);
  }

  private static double proportion(Properties p, Path file, String key) {
    String value = p.getProperty(key, "0").strip();
    try {
      return Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "workload " + file + ": '" + key + "' is not a number: " + value);
    }
  }
}
