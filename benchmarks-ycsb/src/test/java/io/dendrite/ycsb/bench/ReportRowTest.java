package io.dendrite.ycsb.bench;

import static io.dendrite.ycsb.bench.Fixtures.ALONE;
import static io.dendrite.ycsb.bench.Fixtures.WRITE_BACK;
import static io.dendrite.ycsb.bench.Fixtures.WRITE_THROUGH;
import static io.dendrite.ycsb.bench.Fixtures.cpr;
import static io.dendrite.ycsb.bench.Fixtures.run;
import static io.dendrite.ycsb.bench.Fixtures.tooShortForSteady;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Optional;
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
  void eachRegimeDividesByTheDatabaseAloneInTheSameRegime() {
    Regime capped = Regime.capped(0.25);
    List<ReportRow> rows =
        ReportRow.of(
            List.of(
                run(ALONE, cpr(10), 1000, Optional.empty()),
                run(WRITE_BACK, cpr(10), 2000, 2400, Optional.empty()),
                Fixtures.in(capped, run(ALONE, cpr(10), 250, 200, Optional.empty())),
                Fixtures.in(capped, run(WRITE_BACK, cpr(10), 2000, 2400, Optional.empty())),
                Fixtures.in(capped, run(WRITE_THROUGH, cpr(99), 900, Optional.empty()))));

    assertThat(rows.get(0).ratioToDatabaseAlone()).hasValue(1.0);
    assertThat(rows.get(1).ratioToDatabaseAlone()).hasValue(2.0);
    assertThat(rows.get(1).steadyRatioToDatabaseAlone()).hasValue(2.0);
    assertThat(rows.get(2).ratioToDatabaseAlone()).hasValue(1.0);
    assertThat(rows.get(3).ratioToDatabaseAlone()).as("capped: 2000 / 250").hasValue(8.0);
    assertThat(rows.get(3).steadyRatioToDatabaseAlone()).as("capped: 2400 / 200").hasValue(12.0);
    assertThat(rows.get(4).ratioToDatabaseAlone())
        .as("no capped mysql alone on cpr-star-99")
        .isEmpty();
  }
}
