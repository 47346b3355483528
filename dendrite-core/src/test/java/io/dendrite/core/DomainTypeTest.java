package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;

class DomainTypeTest {

  @Test
  void boundsRoundTripThroughTheirTextForm() {
    assertThat(DomainType.INTEGER.parse(DomainType.INTEGER.format(-42))).isEqualTo(-42);
    assertThat(DomainType.LONG.parse(DomainType.LONG.format(Long.MIN_VALUE)))
        .isEqualTo(Long.MIN_VALUE);
    for (double real : List.of(0.1, -0.0, 1e300, Double.MIN_VALUE, Double.NEGATIVE_INFINITY)) {
      assertThat(DomainType.REAL.parse(DomainType.REAL.format(real))).isEqualTo(real);
    }
    for (String text : List.of("", "a b", "x:y", "100%", "ünï*+")) {
      String formatted = DomainType.TEXT.format(text);
      assertThat(formatted).doesNotContain(":", " ");
      assertThat(DomainType.TEXT.parse(formatted)).isEqualTo(text);
    }
    LocalDate date = LocalDate.of(2026, 11, 21);
    assertThat(DomainType.DATE.parse(DomainType.DATE.format(date))).isEqualTo(date);
  }

  @Test
  void castRefusesNullWrongTypeAndNaNNamingTheArgument() {
    assertThatThrownBy(() -> DomainType.LONG.cast("lowerBound", null))
        .hasMessage("lowerBound must not be null");
    assertThatThrownBy(() -> DomainType.LONG.cast("upperBound", 5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("upperBound must be a long");
    assertThatThrownBy(() -> DomainType.REAL.cast("lowerBound", Double.NaN))
        .hasMessageContaining("NaN");
    assertThat(DomainType.REAL.cast("lowerBound", 2.5)).isEqualTo(2.5);
  }

  @Test
  void parseRefusesForeignText() {
    assertThatThrownBy(() -> DomainType.INTEGER.parse("seven"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a integer bound");
    assertThatThrownBy(() -> DomainType.DATE.parse("2026-13-01"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
