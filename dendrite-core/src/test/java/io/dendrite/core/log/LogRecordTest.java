package io.dendrite.core.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LogRecordTest {

  @Test
  void linesRoundTripAndKeysMayHoldColons() {
    LogRecord insert =
        new LogRecord(LogRecord.Action.INSERT, 7, "1", "9", Optional.of("dd:t:a:1:9"));
    LogRecord delete = new LogRecord(LogRecord.Action.DELETE, 8, "1", "9", Optional.empty());

    assertThat(insert.toLine()).isEqualTo("insert:7:1:9:dd:t:a:1:9");
    assertThat(delete.toLine()).isEqualTo("delete:8:1:9");
    assertThat(LogRecord.parse(insert.toLine())).contains(insert);
    assertThat(LogRecord.parse(delete.toLine())).contains(delete);
  }

  @Test
  void tornOrForeignLinesAreNotRecords() {
    for (String line :
        List.of(
            "",
            "insert:7:1",
            "insert:x:1:9:k",
            "upsert:7:1:9:k",
            "delete:8:1:9:k",
            "insert:7:1:9:")) {
      assertThat(LogRecord.parse(line)).as(line).isEmpty();
    }
  }

  @Test
  void onlyInsertsCarryKeysAndBoundsHoldNoColon() {
    assertThatThrownBy(() -> new LogRecord(LogRecord.Action.COVER, 1, "1", "2", Optional.of("k")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new LogRecord(LogRecord.Action.INSERT, 1, "1", "2", Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> new LogRecord(LogRecord.Action.DELETE, 1, "a:b", "2", Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
