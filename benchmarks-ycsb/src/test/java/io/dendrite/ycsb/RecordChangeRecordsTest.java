package io.dendrite.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.Interval;
import io.dendrite.writeback.change.EntityChanges;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RecordChangeRecordsTest {
  private final RecordTable table = new RecordTable("usertable", 2, "field");
  private final RecordChangeRecords records = new RecordChangeRecords(table);
  private final YcsbRecord first = new YcsbRecord("user1", 1, Map.of("field0", "a", "field1", "b"));
  private final YcsbRecord second =
      new YcsbRecord("user2", 2, Map.of("field0", "c", "field1", "d"));
  private final Interval<Long> entry = Interval.of(0L, 9L);

  @Test
  void everyKindOfWriteSurvivesItsByteForm() {
    for (EntityChanges change :
        List.of(
            table.update("user1", Map.of("field0", "x")),
            table.insert(first),
            table.delete("user2"))) {
      assertThat(records.decode(records.encode(change))).isEqualTo(change);
    }
  }

  @Test
  void anUpdateChangesOnlyTheFieldsItSetsOfTheRecordItNames() {
    List<YcsbRecord> after =
        records.apply(entry, List.of(first, second), table.update("user2", Map.of("field1", "z")));

    assertThat(after)
        .containsExactlyInAnyOrder(
            first, new YcsbRecord("user2", 2, Map.of("field0", "c", "field1", "z")));
  }

  @Test
  void anUpdateOfARecordTheEntryDoesNotHoldAddsNothing() {
    assertThat(records.apply(entry, List.of(first), table.update("user2", Map.of("field1", "z"))))
        .containsExactly(first);
  }

  @Test
  void anInsertAddsOrReplacesTheRecordAndADeleteRemovesIt() {
    YcsbRecord replaced = new YcsbRecord("user1", 1, Map.of("field0", "new", "field1", "new"));

    assertThat(records.apply(entry, List.of(second), table.insert(first)))
        .containsExactlyInAnyOrder(first, second);
    assertThat(records.apply(entry, List.of(first, second), table.insert(replaced)))
        .containsExactlyInAnyOrder(replaced, second);
    assertThat(records.apply(entry, List.of(first, second), table.delete("user1")))
        .containsExactly(second);
  }

  @Test
  void refusesBytesThatAreNoChangeRecord() {
    byte[] whole = records.encode(table.update("user1", Map.of("field0", "x")));
    for (byte[] bad :
        List.of(
            new byte[] {0, 0}, new byte[] {0, 0, 0, 9, 'x'}, java.util.Arrays.copyOf(whole, 12))) {
      assertThatThrownBy(() -> records.decode(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not a YCSB change record");
    }
  }
}
