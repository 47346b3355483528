package io.dendrite.writeback.kernel;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One snapshot of an engine's metrics shared by all of its meters for up to {@code maxAge}: taking one reads every
 * partition from the cache, so a registry scraping ten meters must not take ten. While a snapshot cannot be taken (a
 * cache server down), gauges read NaN and counters keep their last value. Also keeps the rate of one monotonic count
 * between snapshots. Only the meter binders use it, so Micrometer, optional for the module, is present then.
 *
 * @param <T> the snapshot type
 */
public final class SharedSnapshot<T> {
  private static final Logger log = LoggerFactory.getLogger(SharedSnapshot.class);

  private final Supplier<T> source;
  private final long maxAgeNanos;
  private final ToLongFunction<T> counted;
  private final DrainRate countRate = new DrainRate();
  private T snapshot;
  private boolean failed;
  private boolean taken;
  private double rate;
  private long takenNanos;

  /**
   * @param source takes a snapshot
   * @param maxAge how long one snapshot serves every meter
   * @param counted the monotonic count whose rate {@link #rate} gives
   */
  public SharedSnapshot(Supplier<T> source, Duration maxAge, ToLongFunction<T> counted) {
    this.source = source;
    this.maxAgeNanos = maxAge.toNanos();
    this.counted = counted;
  }

  /** A gauge's value: from the current snapshot, NaN while none can be taken. */
  public synchronized double gauge(ToDoubleFunction<T> value) {
    refresh();
    return failed ? Double.NaN : value.applyAsDouble(snapshot);
  }

  /** A counter's value: from the latest snapshot taken, 0 before the first. */
  public synchronized double counter(ToDoubleFunction<T> value) {
    refresh();
    return snapshot == null ? 0 : value.applyAsDouble(snapshot);
  }

  /**
   * Registers a gauge of {@code value} from the shared snapshot. The gauge holds this strongly (Micrometer's default
   * is a weak reference), so the registry keeps it, and the counters that read it, alive.
   */
  public void registerGauge(
      MeterRegistry registry,
      String name,
      String description,
      String unit,
      Iterable<Tag> tags,
      ToDoubleFunction<T> value) {
    Gauge.builder(name, this, shared -> shared.gauge(value))
        .description(description)
        .baseUnit(unit)
        .tags(tags)
        .strongReference(true)
        .register(registry);
  }

  /** Registers a function counter of {@code value} from the shared snapshot. */
  public void registerCounter(
      MeterRegistry registry,
      String name,
      String description,
      Iterable<Tag> tags,
      ToDoubleFunction<T> value) {
    FunctionCounter.builder(name, this, shared -> shared.counter(value))
        .description(description)
        .tags(tags)
        .register(registry);
  }

  /** The counted items per second between the last two snapshots; NaN while none can be taken. */
  public synchronized double rate() {
    refresh();
    return failed ? Double.NaN : rate;
  }

  private void refresh() {
    long now = System.nanoTime();
    if (taken && now - takenNanos < maxAgeNanos) {
      return;
    }
    try {
      snapshot = source.get();
      failed = false;
      rate = countRate.observe(counted.applyAsLong(snapshot));
    } catch (RuntimeException cannot) {
      failed = true;
      log.debug("could not take a metrics snapshot", cannot);
    }
    taken = true;
    takenNanos = now;
  }
}
