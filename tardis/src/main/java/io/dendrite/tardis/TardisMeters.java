package io.dendrite.tardis;

import io.dendrite.writeback.kernel.SharedSnapshot;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Publishes a {@link Tardis}'s {@link TardisMetrics} as Micrometer meters, the way {@code WriteBackMeters} publishes
 * write-back's (one snapshot shared for a second; NaN gauges while none can be taken), each tagged {@code
 * technique} plus the caller's tags:
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>value</th></tr>
 *   <tr><td>{@code dendrite.tardis.mode}</td><td>gauge</td><td>this process's mode: 0 normal, 1 failed, 2
 *       recovery</td></tr>
 *   <tr><td>{@code dendrite.tardis.mode.transitions}</td><td>function counter</td><td>mode changes</td></tr>
 *   <tr><td>{@code dendrite.tardis.buffered.documents}</td><td>gauge</td><td>documents listed with a buffered
 *       write, all processes (the TeleW backlog)</td></tr>
 *   <tr><td>{@code dendrite.tardis.oldest.buffered}</td><td>time gauge</td><td>age of the oldest listing</td></tr>
 *   <tr><td>{@code dendrite.tardis.recovery.rate}</td><td>gauge, per second</td><td>buffered writes this process
 *       applied per second between the last two snapshots</td></tr>
 *   <tr><td>{@code dendrite.tardis.recovered}</td><td>function counter</td><td>buffered writes this process
 *       applied; {@code dendrite.tardis.recovered.foreground}: of those, by misses and writes</td></tr>
 *   <tr><td>{@code dendrite.tardis.failed.writes.absorbed}</td><td>function counter</td><td>writes buffered and
 *       acknowledged instead of failed</td></tr>
 *   <tr><td>{@code dendrite.tardis.unavailable.misses}, {@code .outcome.unknown}, {@code .teleports.refused}</td>
 *       <td>function counters</td><td>the refusals</td></tr>
 *   <tr><td>{@code dendrite.tardis.pinned}</td><td>gauge, bytes</td><td>pinned by this process, every replica
 *       counted</td></tr>
 * </table>
 */
public final class TardisMeters implements MeterBinder {
  private static final String PREFIX = "dendrite.tardis.";

  private final SharedSnapshot<TardisMetrics> snapshots;
  private final Tags tags;

  /** Meters over any source of snapshots (for tests); {@link #of} is the way in. */
  TardisMeters(
      Technique technique, Supplier<TardisMetrics> source, Duration maxAge, Iterable<Tag> tags) {
    this.snapshots = new SharedSnapshot<>(source, maxAge, TardisMetrics::recovered);
    this.tags = Tags.of(tags).and("technique", technique.name());
  }

  /** Meters for {@code tardis}, tagged {@code technique} and {@code tags}. */
  public static TardisMeters of(Tardis tardis, Tag... tags) {
    Objects.requireNonNull(tardis, "tardis");
    return new TardisMeters(
        tardis.technique(), tardis::metrics, Duration.ofSeconds(1), Tags.of(tags));
  }

  /** Meters for {@code ranges}, tagged {@code technique} and {@code tags}. */
  public static TardisMeters of(TardisDendrite<?, ?> ranges, Tag... tags) {
    Objects.requireNonNull(ranges, "ranges");
    return new TardisMeters(
        ranges.technique(), ranges::metrics, Duration.ofSeconds(1), Tags.of(tags));
  }

  /**
   * Meters for a Dendrite's TARDIS ({@code Dendrite.Builder.outageTolerance(ranges)}): its ranges open here together
   * ({@link TardisRanges#total()}), tagged {@code technique} and {@code tags}.
   */
  public static TardisMeters of(TardisRanges ranges, Tag... tags) {
    Objects.requireNonNull(ranges, "ranges");
    return new TardisMeters(
        ranges.technique(), ranges::total, Duration.ofSeconds(1), Tags.of(tags));
  }

  /** Registers the meters; the gauges hold this binder strongly, so the registry keeps it alive. */
  @Override
  public void bindTo(MeterRegistry registry) {
    gauge(
        registry,
        "mode",
        "this process's mode: 0 normal, 1 failed, 2 recovery",
        null,
        m -> code(m.mode()));
    counter(registry, "mode.transitions", "mode changes", TardisMetrics::modeTransitions);
    gauge(
        registry,
        "buffered.documents",
        "documents listed with a buffered write, all processes",
        null,
        TardisMetrics::bufferedDocuments);
    TimeGauge.builder(
            PREFIX + "oldest.buffered",
            snapshots,
            TimeUnit.SECONDS,
            shared -> shared.gauge(TardisMeters::oldestAgeSeconds))
        .description("age of the oldest listed buffered write")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    Gauge.builder(PREFIX + "recovery.rate", snapshots, SharedSnapshot::rate)
        .description("buffered writes this process applied per second")
        .baseUnit("per_second")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    counter(
        registry, "recovered", "buffered writes this process applied", TardisMetrics::recovered);
    counter(
        registry,
        "recovered.foreground",
        "buffered writes misses and writes applied",
        TardisMetrics::recoveredByForeground);
    counter(
        registry,
        "failed.writes.absorbed",
        "writes buffered and acknowledged instead of failed",
        TardisMetrics::failedWritesAbsorbed);
    counter(
        registry,
        "unavailable.misses",
        "misses refused as unavailable",
        TardisMetrics::unavailableMisses);
    counter(
        registry,
        "outcome.unknown",
        "writes refused: the database may have applied them",
        TardisMetrics::outcomeUnknown);
    counter(
        registry,
        "teleports.refused",
        "writes refused: pinned memory ran out",
        TardisMetrics::teleportsRefused);
    gauge(
        registry,
        "pinned",
        "bytes pinned by this process, every replica counted",
        "bytes",
        TardisMetrics::pinnedBytes);
  }

  static double code(Mode mode) {
    return switch (mode) {
      case NORMAL -> 0;
      case FAILED -> 1;
      case RECOVERY -> 2;
    };
  }

  private static double oldestAgeSeconds(TardisMetrics metrics) {
    return metrics
        .oldestBuffered()
        .map(since -> Duration.between(since, Instant.now()).toNanos() / 1e9)
        .orElse(0.0);
  }

  private void gauge(
      MeterRegistry registry,
      String name,
      String description,
      String unit,
      ToDoubleFunction<TardisMetrics> value) {
    snapshots.registerGauge(registry, PREFIX + name, description, unit, tags, value);
  }

  private void counter(
      MeterRegistry registry,
      String name,
      String description,
      ToDoubleFunction<TardisMetrics> value) {
    snapshots.registerCounter(registry, PREFIX + name, description, tags, value);
  }
}
