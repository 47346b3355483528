package io.dendrite.writeback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class WriteBackMetersTest {
  private static final WriteBackMetrics SNAPSHOT =
      new WriteBackMetrics(7, Duration.ofMillis(1500), 4096, 120, 3.5, 9, 2, 1, 0);

  @Test
  void everyMetricIsAMeterTaggedWithItsEngine() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new WriteBackMeters("sessions", () -> SNAPSHOT, Duration.ofHours(1), Tags.of("app", "shop"))
        .bindTo(registry);

    assertThat(
            registry
                .get("dendrite.writeback.pending")
                .tags("engine", "sessions", "app", "shop")
                .gauge()
                .value())
        .isEqualTo(7);
    assertThat(
            registry
                .get("dendrite.writeback.oldest.pending")
                .timeGauge()
                .value(TimeUnit.MILLISECONDS))
        .isEqualTo(1500);
    assertThat(registry.get("dendrite.writeback.pinned").gauge().value()).isEqualTo(4096);
    assertThat(registry.get("dendrite.writeback.pinned").gauge().getId().getBaseUnit())
        .isEqualTo("bytes");
    assertThat(registry.get("dendrite.writeback.drained").functionCounter().count()).isEqualTo(120);
    assertThat(registry.get("dendrite.writeback.store.retries").functionCounter().count())
        .isEqualTo(9);
    assertThat(registry.get("dendrite.writeback.fallbacks").functionCounter().count()).isEqualTo(2);
    assertThat(registry.get("dendrite.writeback.undecodable").functionCounter().count())
        .isEqualTo(1);
    assertThat(registry.get("dendrite.writeback.drain.rate").gauge().value()).isPositive();
  }

  @Test
  void theMetersShareOneSnapshotForItsMaximumAge() {
    AtomicInteger snapshots = new AtomicInteger();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new WriteBackMeters(
            "documents",
            () -> {
              snapshots.incrementAndGet();
              return SNAPSHOT;
            },
            Duration.ofHours(1),
            Tags.empty())
        .bindTo(registry);

    registry
        .getMeters()
        .forEach(meter -> meter.measure().forEach(measurement -> measurement.getValue()));
    registry
        .getMeters()
        .forEach(meter -> meter.measure().forEach(measurement -> measurement.getValue()));

    assertThat(snapshots).hasValue(1);
  }

  @Test
  void theDrainRateIsMeasuredBetweenTheMetersOwnSnapshots() throws InterruptedException {
    AtomicReference<WriteBackMetrics> current = new AtomicReference<>(withDrained(0));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new WriteBackMeters("documents", current::get, Duration.ZERO, Tags.empty()).bindTo(registry);
    double first = registry.get("dendrite.writeback.drain.rate").gauge().value();

    current.set(withDrained(1_000));
    Thread.sleep(20);
    double busy = registry.get("dendrite.writeback.drain.rate").gauge().value();
    double idle = registry.get("dendrite.writeback.drain.rate").gauge().value();

    assertThat(first).isZero();
    assertThat(busy).as("1000 drained within about 20 ms").isGreaterThan(1_000);
    assertThat(idle).as("nothing drained since").isZero();
  }

  @Test
  void aFailedSnapshotGivesNaNGaugesAndKeepsTheCountersLastValue() {
    AtomicReference<WriteBackMetrics> current = new AtomicReference<>(SNAPSHOT);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new WriteBackMeters(
            "documents",
            () -> {
              WriteBackMetrics metrics = current.get();
              if (metrics == null) {
                throw new IllegalStateException("cache server down");
              }
              return metrics;
            },
            Duration.ZERO,
            Tags.empty())
        .bindTo(registry);
    assertThat(registry.get("dendrite.writeback.drained").functionCounter().count()).isEqualTo(120);

    current.set(null);

    assertThat(registry.get("dendrite.writeback.pending").gauge().value()).isNaN();
    assertThat(registry.get("dendrite.writeback.drain.rate").gauge().value()).isNaN();
    assertThat(registry.get("dendrite.writeback.drained").functionCounter().count()).isEqualTo(120);
  }

  @Test
  void missingPartsAreRefused() {
    assertThatThrownBy(() -> new WriteBackMeters("documents", null, Duration.ZERO, Tags.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("source");
    assertThatThrownBy(
            () ->
                new WriteBackMeters(
                    "documents", () -> SNAPSHOT, Duration.ofSeconds(-1), Tags.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxSnapshotAge");
    assertThatThrownBy(() -> WriteBackMeters.of((DocumentWriteBack) null, new Tag[0]))
        .isInstanceOf(NullPointerException.class);
  }

  private static WriteBackMetrics withDrained(long drained) {
    return new WriteBackMetrics(0, Duration.ZERO, 0, drained, 0, 0, 0, 0, 0);
  }
}
