package io.dendrite.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class StaleReadCheckerTest {

  @Test
  void readAfterACompletedWriteMustSeeIt() {
    History history = new History(Map.of(1L, "a"));
    history.recordWrite(1, "b", 10, 20);
    history.recordRead(1, 1, Map.of(1L, "a"), 30, 40);
    history.recordRead(1, 1, Map.of(1L, "b"), 30, 40);

    StaleReadChecker.Report report = StaleReadChecker.check(history);

    assertThat(report.rowReadsChecked()).isEqualTo(2);
    assertThat(report.count()).isEqualTo(1);
    assertThat(report.violations().get(0).returned()).isEqualTo("a");
  }

  @Test
  void readOverlappingAWriteMaySeeEitherValue() {
    History history = new History(Map.of(1L, "a"));
    history.recordWrite(1, "b", 10, 50);
    history.recordRead(1, 1, Map.of(1L, "a"), 20, 30);
    history.recordRead(1, 1, Map.of(1L, "b"), 20, 30);
    history.recordRead(1, 1, Map.of(1L, "b"), 5, 12);

    assertThat(StaleReadChecker.check(history).count()).isZero();
  }

  @Test
  void aValueNoWriteProducedIsAViolation() {
    History history = new History(Map.of(1L, "a"));
    history.recordRead(1, 1, Map.of(1L, "z"), 20, 30);

    assertThat(StaleReadChecker.check(history).count()).isEqualTo(1);
  }

  @Test
  void aWriteThatStartsAfterTheReadCannotBeSeen() {
    History history = new History(Map.of(1L, "a"));
    history.recordWrite(1, "b", 40, 50);
    history.recordRead(1, 1, Map.of(1L, "b"), 20, 30);

    assertThat(StaleReadChecker.check(history).count()).isEqualTo(1);
  }

  @Test
  void concurrentWritesThatBothEndedBeforeTheReadLeaveEitherValue() {
    History history = new History(Map.of(1L, "a"));
    history.recordWrite(1, "b", 10, 30);
    history.recordWrite(1, "c", 20, 40);
    history.recordRead(1, 1, Map.of(1L, "b"), 50, 60);
    history.recordRead(1, 1, Map.of(1L, "c"), 50, 60);
    history.recordRead(1, 1, Map.of(1L, "a"), 50, 60);

    StaleReadChecker.Report report = StaleReadChecker.check(history);

    assertThat(report.count()).isEqualTo(1);
    assertThat(report.violations().get(0).returned()).isEqualTo("a");
  }

  @Test
  void aWriteCertainlyOverwrittenBeforeTheReadIsStale() {
    History history = new History(Map.of());
    history.recordWrite(1, "b", 10, 20);
    history.recordWrite(1, "c", 30, 40);
    history.recordRead(1, 1, Map.of(1L, "b"), 50, 60);

    assertThat(StaleReadChecker.check(history).count()).isEqualTo(1);
  }

  @Test
  void rangeReadsCheckEveryRowAndTreatMissingRowsAsAbsent() {
    History history = new History(Map.of(1L, "a", 2L, "a"));
    history.recordWrite(2, null, 10, 20);
    history.recordWrite(3, "new", 10, 20);
    history.recordRead(1, 3, Map.of(1L, "a", 3L, "new"), 30, 40);
    history.recordRead(1, 3, Map.of(1L, "a", 2L, "a"), 30, 40);

    StaleReadChecker.Report report = StaleReadChecker.check(history);

    assertThat(report.rowReadsChecked()).isEqualTo(6);
    assertThat(report.violations())
        .extracting(StaleReadChecker.Violation::row)
        .containsExactlyInAnyOrder(2L, 3L);
  }
}
