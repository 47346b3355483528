package io.dendrite.writeback;

import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.dendrite.writeback.kernel.SharedSnapshot;
import io.dendrite.writeback.session.SessionWriteBack;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Publishes a write-back engine's {@link WriteBackMetrics} as Micrometer meters, every one tagged {@code
 * engine=documents} ({@link DocumentWriteBack}) or {@code engine=sessions} ({@link SessionWriteBack}) plus the caller's tags:
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>value</th></tr>
 *   <tr><td>{@code dendrite.writeback.pending}</td><td>gauge</td><td>buffered writes (documents) or sessions
 *       waiting to be applied, all processes</td></tr>
 *   <tr><td>{@code dendrite.writeback.oldest.pending}</td><td>time gauge</td><td>age of the oldest of them</td></tr>
 *   <tr><td>{@code dendrite.writeback.pinned}</td><td>gauge, bytes</td><td>pinned by this engine, every replica
 *       counted</td></tr>
 *   <tr><td>{@code dendrite.writeback.drain.rate}</td><td>gauge, per second</td><td>drained per second between
 *       the last two snapshots</td></tr>
 *   <tr><td>{@code dendrite.writeback.drained}</td><td>function counter</td><td>drained by this engine</td></tr>
 *   <tr><td>{@code dendrite.writeback.store.retries}</td><td>function counter</td><td>data-store operations
 *       retried</td></tr>
 *   <tr><td>{@code dendrite.writeback.fallbacks}</td><td>function counter</td><td>writes that fell back to
 *       write-through</td></tr>
 *   <tr><td>{@code dendrite.writeback.undecodable}</td><td>function counter</td><td>buffered values that could not
 *       be decoded and were moved aside to {@code Undecodable:<key>}; each waits for an operator</td></tr>
 *   <tr><td>{@code dendrite.writeback.unpinned}</td><td>function counter</td><td>values under the engine's keys
 *       that were not pinned (another user's {@code set}), refused instead of applied</td></tr>
 * </table>
 *
 * <p>A snapshot reads every pending-writes partition or queue from the cache, so the meters share one snapshot
 * for {@code maxSnapshotAge} (default 1 s) instead of taking one per meter. When a snapshot cannot be taken (a
 * cache server down), gauges report NaN and counters keep their last value. Micrometer is an optional dependency
 * of this module: add {@code io.micrometer:micrometer-core} to use this class.
 */
public final class WriteBackMeters implements MeterBinder {
  private static final String PREFIX = "dendrite.writeback.";

  private final SharedSnapshot<WriteBackMetrics> snapshots;
  private final Tags tags;

  /**
   * Meters over any source of snapshots.
   *
   * @param engine the {@code engine} tag's value
   * @param source takes a snapshot, e.g. {@code writeBack::metrics}
   * @param maxSnapshotAge how long one snapshot serves every meter
   * @param tags more tags for every meter
   */
  public WriteBackMeters(
      String engine,
      Supplier<WriteBackMetrics> source,
      Duration maxSnapshotAge,
      Iterable<Tag> tags) {
    if (engine == null
        || source == null
        || maxSnapshotAge == null
        || maxSnapshotAge.isNegative()
        || tags == null) {
      throw new IllegalArgumentException(
          "engine, source, a non-negative maxSnapshotAge and tags are required");
    }
    this.snapshots = new SharedSnapshot<>(source, maxSnapshotAge, WriteBackMetrics::drained);
    this.tags = Tags.of(tags).and("engine", engine);
  }

  /** Meters for a document-level engine, tagged {@code engine=documents} and {@code tags}. */
  public static WriteBackMeters of(DocumentWriteBack engine, Tag... tags) {
    return new WriteBackMeters(
        "documents",
        Objects.requireNonNull(engine, "engine")::metrics,
        Duration.ofSeconds(1),
        Tags.of(tags));
  }

  /**
   * Meters for a write-back Dendrite's engines together ({@link WriteBack#metrics()}, one engine per range this
   * process owns), tagged {@code engine=documents} and {@code tags}; all zero while it owns none.
   */
  public static WriteBackMeters of(WriteBack writeBack, Tag... tags) {
    Objects.requireNonNull(writeBack, "writeBack");
    return new WriteBackMeters(
        "documents",
        () -> WriteBackMetrics.total(writeBack.metrics()),
        Duration.ofSeconds(1),
        Tags.of(tags));
  }

  /** Meters for a session engine, tagged {@code engine=sessions} and {@code tags}. */
  public static WriteBackMeters of(SessionWriteBack engine, Tag... tags) {
    return new WriteBackMeters(
        "sessions",
        Objects.requireNonNull(engine, "engine")::metrics,
        Duration.ofSeconds(1),
        Tags.of(tags));
  }

  /**
   * Registers the meters. The gauges hold this binder strongly (Micrometer's default is a weak reference), so the
   * registry keeps it, and the function counters that share it, alive.
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    gauge(
        registry,
        "pending",
        "buffered writes or sessions waiting to be applied",
        null,
        metrics -> metrics.pendingWrites());
    TimeGauge.builder(
            PREFIX + "oldest.pending",
            this,
            TimeUnit.SECONDS,
            meters -> meters.gaugeValue(metrics -> metrics.oldestPendingAge().toNanos() / 1e9))
        .description("age of the oldest pending buffered write or session")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    gauge(
        registry,
        "pinned",
        "bytes pinned by this engine, every replica counted",
        "bytes",
        metrics -> metrics.pinnedBytes());
    Gauge.builder(PREFIX + "drain.rate", this, meters -> meters.rate())
        .description(
            "buffered writes or sessions drained per second between the last two snapshots")
        .baseUnit("per_second")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    counter(
        registry,
        "drained",
        "buffered writes or sessions drained by this engine",
        metrics -> metrics.drained());
    counter(
        registry,
        "store.retries",
        "data-store operations retried while the store was unavailable",
        metrics -> metrics.storeRetries());
    counter(
        registry,
        "fallbacks",
        "writes that fell back to write-through",
        metrics -> metrics.writeThroughFallbacks());
    counter(
        registry,
        "undecodable",
        "buffered values that could not be decoded and were moved aside",
        metrics -> metrics.undecodableMovedAside());
    counter(
        registry,
        "unpinned",
        "values under the engine's keys that were not pinned, refused instead of applied",
        metrics -> metrics.unpinnedRefused());
  }

  private void gauge(
      MeterRegistry registry,
      String name,
      String description,
      String unit,
      ToDoubleFunction<WriteBackMetrics> value) {
    snapshots.registerGauge(registry, PREFIX + name, description, unit, tags, value);
  }

  private void counter(
      MeterRegistry registry,
      String name,
      String description,
      ToDoubleFunction<WriteBackMetrics> value) {
    snapshots.registerCounter(registry, PREFIX + name, description, tags, value);
  }

  private double gaugeValue(ToDoubleFunction<WriteBackMetrics> value) {
    return snapshots.gauge(value);
  }

  private double rate() {
    return snapshots.rate();
  }
}
