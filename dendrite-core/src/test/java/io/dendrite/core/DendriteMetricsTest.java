package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Adding up Dendrites' counts, as a Dendrite over many processes adds up its ranges'. */
class DendriteMetricsTest {
  private static final DendriteMetrics FIRST =
      new DendriteMetrics(4, 3, 1, 1, 0, 2, 1, 1, 0, 1.0, 4.0, 3.0, 5, 500, 1, 0, 7);
  private static final DendriteMetrics SECOND =
      new DendriteMetrics(2, 1, 0, 1, 1, 0, 0, 0, 0, 3.0, 2.0, 0.0, 1, 100, 0, 2, 3);

  @Test
  void countsAndHoldingsAddUpAndAveragesAreWeightedByTheirOperations() {
    DendriteMetrics both = FIRST.plus(SECOND);

    assertThat(both)
        .isEqualTo(
            new DendriteMetrics(
                6,
                4,
                1,
                2,
                1,
                2,
                1,
                1,
                0,
                (3 * 1.0 + 1 * 3.0) / 4,
                (4.0 + 2.0) / 2,
                3.0,
                6,
                600,
                1,
                2,
                10));
  }

  @Test
  void aClosedDendriteKeepsItsCountsButHoldsNothing() {
    DendriteMetrics closed = FIRST.withNothingHeld();

    assertThat(closed.hits()).isEqualTo(3);
    assertThat(closed.nearEvictions()).isEqualTo(1);
    assertThat(closed.roundTripsPerMiss()).isEqualTo(4.0);
    assertThat(closed.nearEntries()).isZero();
    assertThat(closed.nearBytes()).isZero();
    assertThat(closed.cachedEntries()).isZero();
    assertThat(FIRST.plus(closed).hits()).isEqualTo(6);
  }
}
