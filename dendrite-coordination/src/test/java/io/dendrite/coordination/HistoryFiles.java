package io.dendrite.coordination;

import io.dendrite.consistency.History;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the history files of a service's processes ({@link PartitionedChild.HistoryLines}) into one {@link History}.
 * Processes on one host share {@link System#nanoTime()}'s clock (Linux's monotonic clock), so their times compare. A
 * write that started and never returned (its process was killed, or it failed) may have been applied at any time
 * after it started: it is recorded as ending never, so the checker allows its value from then on.
 */
final class HistoryFiles {
  private HistoryFiles() {}

  /** Every file's events, on rows {@code 0..rows-1} that all held 0 first. */
  static History read(List<Path> files, int rows) throws IOException {
    Map<Long, Object> initial = new HashMap<>();
    for (long id = 0; id < rows; id++) {
      initial.put(id, 0L);
    }
    History history = new History(initial);
    for (Path file : files) {
      Set<String> returned = new HashSet<>();
      List<String> lines = Files.exists(file) ? Files.readAllLines(file) : List.of();
      for (String line : lines) {
        if (line.startsWith("W ")) {
          String[] field = line.split(" ");
          returned.add(field[1] + " " + field[3]);
          history.recordWrite(
              Long.parseLong(field[1]),
              value(field[2]),
              Long.parseLong(field[3]),
              Long.parseLong(field[4]));
        }
      }
      for (String line : lines) {
        String[] field = line.split(" ", -1);
        if (field[0].equals("w")
            && field.length == 4
            && !returned.contains(field[1] + " " + field[3])) {
          history.recordWrite(
              Long.parseLong(field[1]), value(field[2]), Long.parseLong(field[3]), Long.MAX_VALUE);
        } else if (field[0].equals("R") && field.length >= 6) {
          history.recordRead(
              Long.parseLong(field[1]),
              Long.parseLong(field[2]),
              rowsOf(field[5]),
              Long.parseLong(field[3]),
              Long.parseLong(field[4]));
        }
      }
    }
    return history;
  }

  /** Increments of one row: those that returned, and those that started and never did (they may have run). */
  record Increments(long acknowledged, long unknown) {}

  /** Every file's increments ({@code i}/{@code I} lines), by row. */
  static Map<Integer, Increments> increments(List<Path> files) throws IOException {
    Map<Integer, long[]> counts = new HashMap<>();
    for (Path file : files) {
      List<String> lines = Files.exists(file) ? Files.readAllLines(file) : List.of();
      Set<String> returned = new HashSet<>();
      for (String line : lines) {
        if (line.startsWith("I ")) {
          String[] field = line.split(" ");
          returned.add(field[1] + " " + field[2]);
          counts.computeIfAbsent(Integer.parseInt(field[1]), id -> new long[2])[0]++;
        }
      }
      for (String line : lines) {
        if (line.startsWith("i ")) {
          String[] field = line.split(" ");
          if (!returned.contains(field[1] + " " + field[2])) {
            counts.computeIfAbsent(Integer.parseInt(field[1]), id -> new long[2])[1]++;
          }
        }
      }
    }
    Map<Integer, Increments> increments = new HashMap<>();
    counts.forEach((id, count) -> increments.put(id, new Increments(count[0], count[1])));
    return increments;
  }

  private static Long value(String text) {
    return text.equals("-") ? null : Long.valueOf(text);
  }

  private static Map<Long, Long> rowsOf(String text) {
    Map<Long, Long> found = new HashMap<>();
    if (!text.isEmpty()) {
      for (String row : text.split(",")) {
        int colon = row.indexOf(':');
        found.put(
            Long.parseLong(row.substring(0, colon)), Long.parseLong(row.substring(colon + 1)));
      }
    }
    return found;
  }
}
