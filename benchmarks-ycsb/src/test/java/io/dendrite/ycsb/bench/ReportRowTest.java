package io.dendrite.ycsb.bench;

import static io.dendrite.ycsb.bench.Fixtures.ALONE;
import static io.dendrite.ycsb.bench.Fixtures.WRITE_BACK;
import static io.dendrite.ycsb.bench.Fixtures.WRITE_THROUGH;
import static io.dendrite.ycsb.bench.Fixtures.cpr;
import static io.dendrite.ycsb.bench.Fixtures.run;
import static io.dendrite.ycsb.bench.Fixtures.tooShortForSteady;
import static io.dendrite.ycsb.bench.Fixtures.withCpu;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class ReportRowTest {

  private static final Configuration MONGODB_ALONE =
      new Configuration(
          "mongodb",
          Database.withoutReset("mongodb"),
          Configuration.ALONE,
          "site.ycsb.BasicDB",
          java.util.Map.of(),
          Configuration.Cache.NONE);

  @Test
  void ratioDividesByTheDatabaseAloneOnTheSameWorkload() {
    List<ReportRow> rows =
        ReportRow.of(
            List.of(
                run(ALONE, cpr(10), 1000, Optional.empty()),
                run(ALONE, cpr(99), 4000, Optional.empty()),
                run(WRITE_BACK, cpr(10), 4500, Optional.empty()),
                run(WRITE_BACK, cpr(99), 2000, Optional.empty())));

    assertThat(rows.get(0).ratioToDatabaseAlone()).hasValue(1.0);
    assertThat(rows.get(2).ratioToDatabaseAlone()).hasValue(4.5);
    assertThat(rows.get(2).improvementPercent().getAsDouble()).isCloseTo(350, within(1e-9));
    assertThat(rows.get(3).ratioToDatabaseAlone()).hasValue(0.5);
    assertThat(rows.get(3).improvementPercent().getAsDouble()).isCloseTo(-50, within(1e-9));
  }

  @Test
  void noRatioWithoutTheDatabaseAloneOnThatWorkloadOrWhenItDidNothing() {
    List<ReportRow> rows =
        ReportRow.of(
            List.of(
                run(ALONE, cpr(10), 0, Optional.empty()),
                run(MONGODB_ALONE, cpr(99), 4000, Optional.empty()),
                run(WRITE_BACK, cpr(10), 4500, Optional.empty()),
                run(WRITE_BACK, cpr(99), 2000, Optional.empty())));

    assertThat(rows.get(2).ratioToDatabaseAlone()).isEmpty();
    assertThat(rows.get(3).ratioToDatabaseAlone()).isEmpty();
    assertThat(rows.get(1).ratioToDatabaseAlone()).hasValue(1.0);
  }

  @Test
  void steadyRatioDividesTheSecondHalvesAndIsEmptyWhenEitherRunWasTooShort() {
    List<ReportRow> rows =
        ReportRow.of(
            List.of(
                run(ALONE, cpr(10), 1000, 1250, Optional.empty()),
                tooShortForSteady(ALONE, cpr(99), 4000),
                run(WRITE_BACK, cpr(10), 4500, 5000, Optional.empty()),
                run(WRITE_BACK, cpr(99), 2000, Optional.empty()),
                tooShortForSteady(WRITE_THROUGH, cpr(10), 3000)));

    assertThat(rows.get(0).steadyRatioToDatabaseAlone()).hasValue(1.0);
    assertThat(rows.get(2).steadyRatioToDatabaseAlone()).hasValue(4.0);
    assertThat(rows.get(2).ratioToDatabaseAlone()).hasValue(4.5);
    assertThat(rows.get(1).steadyRatioToDatabaseAlone()).isEmpty();
    assertThat(rows.get(3).steadyRatioToDatabaseAlone()).isEmpty();
    assertThat(rows.get(3).ratioToDatabaseAlone()).hasValue(0.5);
    assertThat(rows.get(4).steadyRatioToDatabaseAlone()).isEmpty();
    assertThat(rows.get(4).ratioToDatabaseAlone()).hasValue(3.0);
  }

  @Test
  void
      databaseBoundProjectionDividesTheDatabaseAlonesDatabaseCpuPerOperationByTheRunsOnTheSameWorkload() {
    // The database alone: 500 µs/op on cpr-star-10, 1 000 on cpr-star-99; behind the cache 125 on
    // both.
    List<ReportRow> rows =
        ReportRow.of(
            List.of(
                run(ALONE, cpr(10), 1000, Optional.empty()),
                withCpu(
                    run(ALONE, cpr(99), 4000, Optional.empty()), Optional.of(databaseCpu(2000))),
                run(WRITE_BACK, cpr(10), 4500, Optional.empty()),
                run(WRITE_BACK, cpr(99), 2000, Optional.empty())));

    assertThat(rows.get(0).databaseBoundProjection().getAsDouble()).isCloseTo(1, within(1e-9));
    assertThat(rows.get(2).databaseBoundProjection().getAsDouble()).isCloseTo(4, within(1e-9));
    assertThat(rows.get(3).databaseBoundProjection().getAsDouble()).isCloseTo(8, within(1e-9));
    assertThat(rows.get(3).ratioToDatabaseAlone())
        .hasValue(0.5); // measured and projected are apart
  }

  @Test
  void noDatabaseBoundProjectionWhenEitherDatabaseCpuFigureIsMissingOrZero() {
    List<ReportRow> rows =
        ReportRow.of(
            List.of(
                run(ALONE, cpr(10), 1000, Optional.empty()),
                withCpu(run(ALONE, cpr(99), 4000, Optional.empty()), Optional.of(databaseCpu(0))),
                withCpu(run(ALONE, cpr(50), 4000, Optional.empty()), Optional.empty()),
                run(MONGODB_ALONE, cpr(75), 4000, Optional.empty()),
                tooShortForSteady(WRITE_THROUGH, cpr(10), 3000),
                withCpu(
                    run(WRITE_BACK, cpr(10), 4500, Optional.empty()), Optional.of(databaseCpu(0))),
                run(WRITE_BACK, cpr(99), 2000, Optional.empty()),
                run(WRITE_BACK, cpr(50), 2000, Optional.empty()),
                run(WRITE_BACK, cpr(75), 2000, Optional.empty())));

    assertThat(rows.get(0).databaseBoundProjection()).isPresent();
    assertThat(rows.get(1).databaseBoundProjection()).as("alone, no database CPU").isEmpty();
    assertThat(rows.get(2).databaseBoundProjection()).as("alone, no CPU figures").isEmpty();
    assertThat(rows.get(4).databaseBoundProjection()).as("its database CPU unread").isEmpty();
    assertThat(rows.get(5).databaseBoundProjection()).as("its database CPU zero").isEmpty();
    assertThat(rows.get(6).databaseBoundProjection()).as("the alone's zero").isEmpty();
    assertThat(rows.get(7).databaseBoundProjection()).as("the alone's unread").isEmpty();
    assertThat(rows.get(8).databaseBoundProjection()).as("no mysql alone on cpr-star-75").isEmpty();
    assertThat(rows.get(6).ratioToDatabaseAlone()).hasValue(0.5);
  }

  /** 2 000 operations on {@code millis} of database CPU, the rest as {@link Fixtures#cpu}'s database alone. */
  private static CpuUsage databaseCpu(double millis) {
    return new CpuUsage(
        2000,
        OptionalDouble.of(600),
        OptionalDouble.of(0),
        OptionalDouble.of(millis),
        OptionalDouble.of(87.5));
  }
}
