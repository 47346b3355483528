package io.dendrite.core.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LogCompactionTest {

  private static LogRecord insert(long lsn, String lb, String ub) {
    return new LogRecord(LogRecord.Action.INSERT, lsn, lb, ub, Optional.of("k" + lb + "-" + ub));
  }

  private static LogRecord record(LogRecord.Action action, long lsn, String lb, String ub) {
    return new LogRecord(action, lsn, lb, ub, Optional.empty());
  }

  @Test
  void cancellingPairsDisappearWhateverOrderTheyWereAppendedIn() {
    List<LogRecord> appended =
        List.of(
            record(
                LogRecord.Action.DELETE,
                2,
                "1",
                "5"), // batched deletes may land before their insert
            insert(1, "1", "5"),
            insert(3, "6", "9"),
            record(LogRecord.Action.COVER, 4, "0", "9"),
            record(LogRecord.Action.UNCOVER, 6, "0", "9"),
            insert(5, "1", "5"),
            record(LogRecord.Action.COVER, 7, "20", "29"));

    assertThat(LogCompaction.compact(appended))
        .containsExactly(
            insert(3, "6", "9"),
            insert(5, "1", "5"),
            record(LogRecord.Action.COVER, 7, "20", "29"));
  }

  @Test
  void aDeleteWithoutInsertLeavesNothing() {
    assertThat(LogCompaction.compact(List.of(record(LogRecord.Action.DELETE, 1, "1", "2"))))
        .isEmpty();
  }
}
