package io.dendrite.consistency;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Counts reads that returned something the database could not have held while they ran.
 *
 * <p>For each row a read covers, the legal values are those the row may have had at some instant of the
 * read's window [start, end]: the value of any write that overlaps the window, plus the value of every
 * write (or the initial value) that finished before the window and was not certainly overwritten before it
 * began. A write W is certainly overwritten before the read when another write of the same row started
 * after W ended and ended before the read started. Anything else — an older value served from a cache —
 * is a violation. The rule only uses real-time order, so it holds whatever order the database chose for
 * overlapping writes.
 */
public final class StaleReadChecker {

  /** One read of one row that returned a value the row could not have had during the read. */
  public record Violation(long row, Object returned, History.Read read) {}

  /** The outcome: how many row-reads were checked and which ones were stale. */
  public record Report(long rowReadsChecked, List<Violation> violations) {
    /** Number of stale row-reads. */
    public int count() {
      return violations.size();
    }
  }

  private StaleReadChecker() {}

  /** Checks every read of {@code history}. */
  public static Report check(History history) {
    Map<Long, List<History.Write>> writesByRow = new HashMap<>();
    for (History.Write write : history.writes()) {
      writesByRow.computeIfAbsent(write.row(), row -> new ArrayList<>()).add(write);
    }
    writesByRow.values().forEach(list -> list.sort(Comparator.comparingLong(History.Write::end)));

    long checked = 0;
    List<Violation> violations = new ArrayList<>();
    for (History.Read read : history.reads()) {
      for (long row = read.lowerRow(); row <= read.upperRow(); row++) {
        Optional<Object> returned = Optional.ofNullable(read.returned().get(row));
        Optional<Object> initial = Optional.ofNullable(history.initialRows().get(row));
        checked++;
        if (!legal(returned, initial, writesByRow.getOrDefault(row, List.of()), read)) {
          violations.add(new Violation(row, returned.orElse(null), read));
        }
      }
    }
    return new Report(checked, violations);
  }

  /** {@code writes} are one row's writes sorted by end time. */
  private static boolean legal(
      Optional<Object> returned,
      Optional<Object> initial,
      List<History.Write> writes,
      History.Read read) {
    // The latest start among writes that ended before the read began: any write (or the initial
    // value) that ended before this instant was certainly overwritten before the read.
    long overwrittenBefore = Long.MIN_VALUE;
    for (History.Write write : writes) {
      if (write.end() < read.start()) {
        overwrittenBefore = Math.max(overwrittenBefore, write.start());
      }
    }
    if (returned.equals(initial) && overwrittenBefore == Long.MIN_VALUE) {
      return true;
    }
    for (History.Write write : writes) {
      boolean couldBeCurrent = write.start() <= read.end() && write.end() >= overwrittenBefore;
      if (couldBeCurrent && write.value().equals(returned)) {
        return true;
      }
    }
    return false;
  }
}
