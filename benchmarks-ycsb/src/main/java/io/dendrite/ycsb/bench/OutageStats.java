package io.dendrite.ycsb.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;

/**
 * What a binding's stats file says about an outage run: the check of the database against the acknowledged writes
 * after the run ({@code verify.*}, any binding given {@code dendrite.verifydatabase}), and TARDIS's timeline ({@code
 * tardis.*}, the TARDIS binding only). Times are milliseconds since the epoch, as the runner's own.
 *
 * @param recordsChecked records read back from the database; empty when the check was skipped
 * @param lostWrites fields whose database value was older than their last acknowledged write
 * @param skipped why the check was skipped, if it was
 * @param failedAt when TARDIS entered failed mode
 * @param normalAt when TARDIS was back in normal mode, nothing left buffered
 * @param peakBuffered the most documents TARDIS had buffered at once
 * @param absorbed writes TARDIS buffered and acknowledged instead of failing them
 * @param backlog TARDIS's buffered documents, sampled about every second
 */
public record OutageStats(
    OptionalLong recordsChecked,
    OptionalLong lostWrites,
    Optional<String> skipped,
    OptionalLong failedAt,
    OptionalLong normalAt,
    OptionalLong peakBuffered,
    OptionalLong absorbed,
    List<BacklogSample> backlog) {

  /** TARDIS's buffered documents at one moment. */
  public record BacklogSample(long atMillis, long documents) {}

  public OutageStats {
    backlog = List.copyOf(backlog);
  }

  /**
   * Reads the outage entries of a binding stats file; missing entries are empty.
   *
   * @throws IllegalArgumentException naming the file and key when an entry is not a whole number
   */
  public static OutageStats read(Path file) {
    Properties p = PropertiesFiles.load(file, "binding stats");
    List<BacklogSample> backlog = new ArrayList<>();
    String samples = p.getProperty("tardis.backlog", "").strip();
    if (!samples.isEmpty()) {
      for (String sample : samples.split(",")) {
        String[] parts = sample.split(":");
        if (parts.length != 2) {
          throw new IllegalArgumentException(
              "binding stats "
                  + file
                  + ": a tardis.backlog sample is not time:documents: "
                  + sample);
        }
        backlog.add(
            new BacklogSample(
                number(file, "tardis.backlog", parts[0]),
                number(file, "tardis.backlog", parts[1])));
      }
    }
    return new OutageStats(
        optional(p, file, "verify.recordsChecked"),
        optional(p, file, "verify.lostWrites"),
        Optional.ofNullable(p.getProperty("verify.skipped")),
        optional(p, file, "tardis.failedAtMs"),
        optional(p, file, "tardis.normalAtMs"),
        optional(p, file, "tardis.peakBuffered"),
        optional(p, file, "tardis.failedWritesAbsorbed"),
        backlog);
  }

  private static OptionalLong optional(Properties p, Path file, String key) {
    String value = p.getProperty(key);
    return value == null ? OptionalLong.empty() : OptionalLong.of(number(file, key, value));
  }

  private static long number(Path file, String key, String value) {
    try {
      return Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "binding stats " + file + ": '" + key + "' is not a whole number: " + value);
    }
  }
}
