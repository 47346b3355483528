package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad settings are refused at once, naming the setting and the value. */
class TardisBuilderTest {

  @Test
  void refusesBadValuesNamingThem() {
    assertThatThrownBy(() -> Tardis.builder().arAlpha(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("arAlpha")
        .hasMessageContaining("0");
    assertThatThrownBy(() -> Tardis.builder().replicas(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("replicas");
    assertThatThrownBy(() -> Tardis.builder().arWorkers(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("arWorkers");
    assertThatThrownBy(() -> Tardis.builder().checkInterval(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("checkInterval");
    assertThatThrownBy(() -> Tardis.builder().pinnedBudgetBytes(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pinnedBudgetBytes");
    assertThatThrownBy(() -> Tardis.builder().technique(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("technique");
  }

  @Test
  void refusesToBuildWithoutCacheOrStore() {
    assertThatThrownBy(() -> Tardis.builder().build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cache and store are required");
  }
}
