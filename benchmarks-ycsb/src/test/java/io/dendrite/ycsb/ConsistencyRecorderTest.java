package io.dendrite.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConsistencyRecorderTest {
  private final RecordTable table = new RecordTable("usertable", 2, "field");
  private final ConsistencyRecorder recorder = new ConsistencyRecorder(2, 1, 1_000);

  @Test
  void aReadBeforeTheFirstWriteEndedIsNotChecked() {
    recorder.read(table, 5, null, Map.of("field0", "loaded", "field1", "loaded"), 10, 20);
    recorder.write(table, 5, Map.of("field0", "new"), false, true, 15, 30);

    assertThat(recorder.check().rowReadsChecked()).isZero();
  }

  @Test
  void theLoadedValueAfterACompletedWriteIsStale() {
    recorder.write(table, 5, Map.of("field0", "new"), false, true, 10, 20);
    recorder.read(table, 5, Set.of("field0"), Map.of("field0", "loaded"), 30, 40);
    recorder.read(table, 5, Set.of("field0"), Map.of("field0", "new"), 30, 40);

    var report = recorder.check();
    assertThat(report.rowReadsChecked()).isEqualTo(2);
    assertThat(report.count()).isEqualTo(1);
  }

  @Test
  void aValueOverwrittenBeforeTheReadBeganIsStaleOneWrittenDuringItIsNot() {
    recorder.write(table, 5, Map.of("field1", "v1"), false, true, 10, 20);
    recorder.write(table, 5, Map.of("field1", "v2"), false, true, 25, 28);
    recorder.write(table, 5, Map.of("field1", "v3"), false, true, 35, 50);
    recorder.read(table, 5, null, Map.of("field1", "v1"), 30, 40);
    recorder.read(table, 5, null, Map.of("field1", "v2"), 30, 40);
    recorder.read(table, 5, null, Map.of("field1", "v3"), 30, 40);

    var report = recorder.check();
    assertThat(report.count())
        .as("only v1 is stale; field0 was never written, so it is not checked")
        .isEqualTo(1);
    assertThat(report.violations().get(0).returned()).isEqualTo(ConsistencyRecorder.hash("v1"));
  }

  @Test
  void aFailedWriteMayOrMayNotHaveHappened() {
    recorder.write(table, 5, Map.of("field0", "v0"), false, true, 1, 2);
    recorder.write(table, 5, Map.of("field0", "v1"), false, false, 10, 11);
    recorder.read(table, 5, Set.of("field0"), Map.of("field0", "v1"), 30, 40);
    recorder.read(table, 5, Set.of("field0"), Map.of("field0", "v0"), 30, 40);

    assertThat(recorder.check().count()).isZero();
  }

  @Test
  void deletesAndScansLogAbsentRecords() {
    recorder.write(table, 5, Map.of("field0", "a", "field1", "b"), true, true, 1, 2);
    recorder.write(table, 6, Map.of("field0", "c", "field1", "d"), true, true, 1, 2);
    recorder.write(table, 5, Map.of(), true, true, 10, 20);
    recorder.scan(
        table,
        5,
        7,
        null,
        List.of(new YcsbRecord("user6", 6, Map.of("field0", "c", "field1", "d"))),
        30,
        40);
    recorder.read(table, 5, null, Map.of("field0", "a", "field1", "b"), 30, 40);

    var report = recorder.check();
    assertThat(report.rowReadsChecked())
        .as("records 5 and 6 in the scan, record 5 read; 7 never written")
        .isEqualTo(6);
    assertThat(report.count()).as("the deleted record's fields read back").isEqualTo(2);
  }

  @Test
  void tracksEveryStrideThRecordOnly() {
    ConsistencyRecorder sampled = new ConsistencyRecorder(2, 3, 1_000);
    sampled.write(table, 4, Map.of("field0", "new"), false, true, 10, 20);
    sampled.read(table, 4, null, Map.of("field0", "old"), 30, 40);
    sampled.write(table, 6, Map.of("field0", "new"), false, true, 10, 20);
    sampled.read(table, 6, null, Map.of("field0", "old"), 30, 40);

    assertThat(sampled.tracks(4)).isFalse();
    assertThat(sampled.tracks(6)).isTrue();
    assertThat(sampled.check().count()).isEqualTo(1);
  }

  @Test
  void eventsAfterTheBudgetAreDroppedKeepingEveryLoggedReadComplete() {
    ConsistencyRecorder bounded = new ConsistencyRecorder(2, 1, 2);
    bounded.write(table, 5, Map.of("field0", "v1"), false, true, 10, 20);
    bounded.read(table, 5, Set.of("field0"), Map.of("field0", "v1"), 30, 40);
    bounded.read(table, 5, Set.of("field0"), Map.of("field0", "v1"), 50, 60);
    long afterCutoff = System.nanoTime() + 1;
    bounded.write(table, 5, Map.of("field0", "v2"), false, true, afterCutoff, afterCutoff + 10);
    bounded.read(
        table, 5, Set.of("field0"), Map.of("field0", "v1"), afterCutoff + 20, afterCutoff + 30);

    assertThat(bounded.truncated()).isTrue();
    var report = bounded.check();
    assertThat(report.rowReadsChecked()).as("the reads logged before the cutoff").isEqualTo(2);
    assertThat(report.count()).isZero();
  }
}
