package io.dendrite.core.log;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays log records in LSN order and keeps only those still in force: an insert (cover) that a
 * later delete (uncover) of the same interval cancels disappears with it. The paper's compaction of
 * "inserts and deletes that nullify one another".
 */
public final class LogCompaction {
  private LogCompaction() {}

  /** The records in force after replaying {@code records}, in LSN order. */
  public static List<LogRecord> compact(List<LogRecord> records) {
    List<LogRecord> ordered = new ArrayList<>(records);
    ordered.sort(Comparator.comparingLong(LogRecord::lsn));
    Map<String, LogRecord> inserted = new LinkedHashMap<>();
    Map<String, LogRecord> covered = new LinkedHashMap<>();
    for (LogRecord record : ordered) {
      String interval = record.lowerBound() + ":" + record.upperBound();
      switch (record.action()) {
        case INSERT -> inserted.put(interval, record);
        case DELETE -> inserted.remove(interval);
        case COVER -> covered.put(interval, record);
        case UNCOVER -> covered.remove(interval);
      }
    }
    List<LogRecord> live = new ArrayList<>(inserted.values());
    live.addAll(covered.values());
    live.sort(Comparator.comparingLong(LogRecord::lsn));
    return live;
  }
}
