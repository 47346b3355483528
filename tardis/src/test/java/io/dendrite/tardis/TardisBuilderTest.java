package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DomainType;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad settings are refused at once, naming the setting and the value. */
class TardisBuilderTest {

  @Test
  void refusesBadValuesNamingThem() {
    assertThatThrownBy(() -> Tardis.builder().drainBatch(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("drainBatch")
        .hasMessageContaining("0");
    assertThatThrownBy(() -> Tardis.builder().replicas(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("replicas");
    assertThatThrownBy(() -> Tardis.builder().drainThreads(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("drainThreads");
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
  void refusesALockLifetimeMemcachedCannotKeep() {
    assertThatThrownBy(() -> Tardis.builder().stockMemcached(Duration.ofMillis(1500)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockTtl")
        .hasMessageContaining("PT1.5S");
  }

  /** Range results need I/Q leases (the Dendrite's read and write paths), which stock memcached lacks. */
  @Test
  void refusesATardisDendriteOnStockMemcached() {
    assertThatThrownBy(
            () ->
                TardisDendrite.builder(DomainType.LONG, NamedRow.CODEC)
                    .tardis(Tardis.builder().stockMemcached(Duration.ofSeconds(5)))
                    .collection("rows")
                    .domain("pos")
                    .range(0L, 10L)
                    .rowOf(NamedRow::of)
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("I/Q leases");
  }

  @Test
  void refusesToBuildWithoutCacheOrStore() {
    assertThatThrownBy(() -> Tardis.builder().build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cache and store are required");
  }
}
