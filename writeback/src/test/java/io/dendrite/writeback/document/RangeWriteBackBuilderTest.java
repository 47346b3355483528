package io.dendrite.writeback.document;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DomainType;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RangeWriteBackBuilderTest {

  /** A range claim that lapses sooner than its renewals can keep it would let a second owner in. */
  @Test
  void aRangeClaimShorterThanTwoSecondsIsRefused() {
    assertThatThrownBy(
            () -> RangeWriteBack.builder(DomainType.LONG).claimLifetime(Duration.ofMillis(1500)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("claimLifetime must be at least 2 s, got PT1.5S");
  }
}
