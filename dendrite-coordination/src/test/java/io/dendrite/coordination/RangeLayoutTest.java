package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import java.util.List;
import org.junit.jupiter.api.Test;

class RangeLayoutTest {

  @Test
  void equalRangesCoverTheDomainWithoutGapsOrOverlap() {
    RangeLayout<Integer> layout = new RangeLayout<>(DomainType.INTEGER, 0, 59, 6);
    assertThat(layout.size()).isEqualTo(6);
    for (int range = 0; range < 6; range++) {
      assertThat(layout.lowerOf(range)).isEqualTo(range * 10);
      assertThat(layout.upperOf(range)).isEqualTo(range * 10 + 9);
    }
    for (int value = 0; value < 60; value++) {
      assertThat(layout.rangeOf(value)).isEqualTo(value / 10);
    }
  }

  @Test
  void anUnevenDomainLeavesTheLastRangeNarrowerAndNoRangeEmpty() {
    RangeLayout<Integer> layout = new RangeLayout<>(DomainType.INTEGER, 1, 10, 4);
    assertThat(layout.size()).isEqualTo(4);
    assertThat(List.of(layout.lowerOf(3), layout.upperOf(3))).containsExactly(10, 10);
    // 5 values in 4 ranges of width 2 need only 3 of them.
    RangeLayout<Integer> fewer = new RangeLayout<>(DomainType.INTEGER, 0, 4, 4);
    assertThat(fewer.size()).isEqualTo(3);
    assertThat(fewer.upperOf(2)).isEqualTo(4);
  }

  @Test
  void anIntervalIsCutAtTheRangeBoundsItCrosses() {
    RangeLayout<Integer> layout = new RangeLayout<>(DomainType.INTEGER, 0, 59, 6);
    assertThat(layout.split(Interval.of(8, 31)))
        .containsExactly(
            new RangeLayout.Part<>(0, Interval.of(8, 9)),
            new RangeLayout.Part<>(1, Interval.of(10, 19)),
            new RangeLayout.Part<>(2, Interval.of(20, 29)),
            new RangeLayout.Part<>(3, Interval.of(30, 31)));
    assertThat(layout.split(Interval.of(12, 12)))
        .containsExactly(new RangeLayout.Part<>(1, Interval.of(12, 12)));
  }

  @Test
  void theWholeLongDomainSplitsWithoutOverflow() {
    RangeLayout<Long> layout =
        new RangeLayout<>(DomainType.LONG, Long.MIN_VALUE, Long.MAX_VALUE, 3);
    assertThat(layout.lowerOf(0)).isEqualTo(Long.MIN_VALUE);
    assertThat(layout.upperOf(2)).isEqualTo(Long.MAX_VALUE);
    assertThat(layout.rangeOf(0L)).isEqualTo(1);
    assertThat(layout.upperOf(0) + 1).isEqualTo(layout.lowerOf(1));
  }

  @Test
  void badLayoutsAreRefusedSayingWhy() {
    assertThatThrownBy(() -> new RangeLayout<>(DomainType.TEXT, "a", "z", 2))
        .hasMessageContaining("whole-number domains");
    assertThatThrownBy(() -> new RangeLayout<>(DomainType.INTEGER, 5, 1, 2))
        .hasMessageContaining("greater than max");
    assertThatThrownBy(() -> new RangeLayout<>(DomainType.INTEGER, 0, 2, 4))
        .hasMessageContaining("between 1 and the domain's 3 values");
  }
}
