package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.dendrite.ycsb.bench.YcsbOutputParser.Status;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class DatabaseWorkTest {

  private static final Status FIRST = new Status(0, 1_000, 0);
  private static final Status LAST = new Status(20, 5_000, 200);
  private static final StatusCounts FROM = counts(10_000, 7_000, 300);

  /** 4 000 operations later: 6 000 statements, 4 000 commits and 1 000 fsyncs more. */
  private static final StatusCounts TO = counts(16_000, 11_000, 1_300);

  @Test
  void countsPerOperationOverTheOperationsBetweenTheTwoStatusLines() {
    DatabaseWork work = DatabaseWork.between(FIRST, FROM, LAST, TO);

    assertThat(work.operations()).isEqualTo(4_000);
    assertThat(work.statements()).hasValue(6_000);
    assertThat(work.statementsPerOperation().getAsDouble()).isCloseTo(1.5, within(1e-9));
    assertThat(work.commitsPerOperation().getAsDouble()).isCloseTo(1, within(1e-9));
    assertThat(work.fsyncsPerOperation().getAsDouble()).isCloseTo(0.25, within(1e-9));
  }

  @Test
  void aCounterTheServerDoesNotKeepIsBlankButTheOthersAreNot() {
    StatusCounts statementsOnly =
        new StatusCounts(TO.statements(), OptionalLong.empty(), OptionalLong.empty());

    DatabaseWork work = DatabaseWork.between(FIRST, FROM, LAST, statementsOnly);

    assertThat(work.statementsPerOperation()).isPresent();
    assertThat(work.commits()).isEmpty();
    assertThat(work.commitsPerOperation()).isEmpty();
    assertThat(work.fsyncsPerOperation()).isEmpty();
  }

  @Test
  void noOperationsInTheWindowGiveNoFigurePerOperation() {
    DatabaseWork work = DatabaseWork.between(FIRST, FROM, new Status(20, 1_000, 0), TO);

    assertThat(work.statements()).hasValue(6_000);
    assertThat(work.statementsPerOperation()).isEmpty();
    assertThat(work.commitsPerOperation()).isEmpty();
    assertThat(work.fsyncsPerOperation()).isEmpty();
  }

  static StatusCounts counts(long statements, long commits, long fsyncs) {
    return new StatusCounts(
        OptionalLong.of(statements), OptionalLong.of(commits), OptionalLong.of(fsyncs));
  }
}
