package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TardisMetersTest {
  private static final TardisMetrics SNAPSHOT =
      new TardisMetrics(
          Technique.DIS,
          Mode.RECOVERY,
          3,
          42,
          Optional.of(Instant.now().minusSeconds(5)),
          1_000,
          400,
          30,
          12,
          2,
          1,
          8_192);

  @Test
  void everyMetricIsAMeterTaggedWithTheTechnique() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new TardisMeters(Technique.DIS, () -> SNAPSHOT, Duration.ofHours(1), Tags.of("app", "shop"))
        .bindTo(registry);

    assertThat(
            registry
                .get("dendrite.tardis.mode")
                .tags("technique", "DIS", "app", "shop")
                .gauge()
                .value())
        .isEqualTo(2);
    assertThat(registry.get("dendrite.tardis.mode.transitions").functionCounter().count())
        .isEqualTo(3);
    assertThat(registry.get("dendrite.tardis.buffered.documents").gauge().value()).isEqualTo(42);
    assertThat(registry.get("dendrite.tardis.oldest.buffered").timeGauge().value(TimeUnit.SECONDS))
        .isBetween(5.0, 60.0);
    assertThat(registry.get("dendrite.tardis.failed.writes.absorbed").functionCounter().count())
        .isEqualTo(1_000);
    assertThat(registry.get("dendrite.tardis.recovered").functionCounter().count()).isEqualTo(400);
    assertThat(registry.get("dendrite.tardis.recovered.foreground").functionCounter().count())
        .isEqualTo(30);
    assertThat(registry.get("dendrite.tardis.unavailable.misses").functionCounter().count())
        .isEqualTo(12);
    assertThat(registry.get("dendrite.tardis.outcome.unknown").functionCounter().count())
        .isEqualTo(2);
    assertThat(registry.get("dendrite.tardis.teleports.refused").functionCounter().count())
        .isEqualTo(1);
    assertThat(registry.get("dendrite.tardis.pinned").gauge().value()).isEqualTo(8_192);
    assertThat(registry.get("dendrite.tardis.pinned").gauge().getId().getBaseUnit())
        .isEqualTo("bytes");
    assertThat(registry.get("dendrite.tardis.recovery.rate").gauge().value()).isPositive();
  }

  @Test
  void theMetersShareOneSnapshotAndReadNanWhenNoneCanBeTaken() {
    AtomicInteger taken = new AtomicInteger();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new TardisMeters(
            Technique.TARDIS,
            () -> {
              taken.incrementAndGet();
              throw new IllegalStateException("cache server down");
            },
            Duration.ofHours(1),
            Tags.empty())
        .bindTo(registry);

    assertThat(registry.get("dendrite.tardis.mode").gauge().value()).isNaN();
    assertThat(registry.get("dendrite.tardis.buffered.documents").gauge().value()).isNaN();
    assertThat(registry.get("dendrite.tardis.recovered").functionCounter().count()).isZero();
    assertThat(taken).hasValue(1);
  }
}
