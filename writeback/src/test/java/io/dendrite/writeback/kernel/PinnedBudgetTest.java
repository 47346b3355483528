package io.dendrite.writeback.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PinnedBudgetTest {

  @Test
  void refusesGrowthBeyondTheLimitButAlwaysAllowsShrinking() {
    PinnedBudget budget = new PinnedBudget(100);

    assertThat(budget.tryReserve(60)).isTrue();
    assertThat(budget.tryReserve(41)).isFalse();
    assertThat(budget.tryReserve(40)).isTrue();
    assertThat(budget.tryReserve(-30)).isTrue();
    assertThat(budget.used()).isEqualTo(70);
  }

  @Test
  void neverCountsBelowZero() {
    PinnedBudget budget = new PinnedBudget(100);
    budget.adjust(10);

    budget.adjust(-25);

    assertThat(budget.used()).isZero();
    assertThat(budget.tryReserve(100)).isTrue();
  }
}
