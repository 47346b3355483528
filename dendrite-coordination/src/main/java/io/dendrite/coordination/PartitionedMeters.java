package io.dendrite.coordination;

import io.dendrite.core.DendriteMeters;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Publishes what this process of a {@link ManyProcesses} service does with its ranges, every meter tagged {@code
 * cache=<collection>.<domain>} plus the caller's tags: Micrometer's cache meters, as for a Dendrite of one process
 * ({@link DendriteMeters}: {@code cache.gets{result=hit|miss}}, {@code cache.puts}, {@code cache.evictions}, {@code
 * cache.size}, counted as {@link PartitionedDendrite#cacheMetrics} tells), and these:
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>value</th></tr>
 *   <tr><td>{@code dendrite.ranges.owned}</td><td>gauge</td><td>ranges this process serves now</td></tr>
 *   <tr><td>{@code dendrite.ranges.gained{handover=handed-over}}</td><td>function counter</td><td>ranges this
 *       process began to serve after their previous owner handed them over</td></tr>
 *   <tr><td>{@code dendrite.ranges.gained{handover=taken-over}}</td><td>function counter</td><td>ranges it took over
 *       from an owner that stopped without handing them over (it died, was cut off or paused), or that had none</td></tr>
 *   <tr><td>{@code dendrite.ranges.lost}</td><td>function counter</td><td>ranges it stopped serving</td></tr>
 *   <tr><td>{@code dendrite.forwarded{operation=get|write}}</td><td>function counter</td><td>operations sent to
 *       another process, the range's owner</td></tr>
 *   <tr><td>{@code dendrite.forwarded.resent}</td><td>function counter</td><td>forwards sent again after the range
 *       moved</td></tr>
 * </table>
 *
 * <p>Micrometer is an optional dependency of this module: add {@code io.micrometer:micrometer-core} to use this
 * class.
 */
public final class PartitionedMeters implements MeterBinder {
  private final PartitionedDendrite<?, ?> dendrite;
  private final Tags tags;
  private final DendriteMeters cacheMeters;

  private PartitionedMeters(PartitionedDendrite<?, ?> dendrite, Tag... tags) {
    this.dendrite = Objects.requireNonNull(dendrite, "dendrite");
    this.tags = Tags.of(tags).and("cache", dendrite.rangeName());
    this.cacheMeters = DendriteMeters.of(dendrite, PartitionedDendrite::cacheMetrics, tags);
  }

  /** Meters for {@code dendrite}, tagged {@code cache=<collection>.<domain>} and {@code tags}. */
  public static PartitionedMeters of(PartitionedDendrite<?, ?> dendrite, Tag... tags) {
    return new PartitionedMeters(dendrite, tags);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    cacheMeters.bindTo(registry);
    Gauge.builder("dendrite.ranges.owned", dendrite, d -> d.servedRanges().size())
        .tags(tags)
        .description("ranges this process serves now")
        .register(registry);
    counter(
        registry,
        "dendrite.ranges.gained",
        Tags.of("handover", "handed-over"),
        "ranges gained from an owner that handed them over",
        PartitionedDendrite.Metrics::rangesHandedOverHere);
    counter(
        registry,
        "dendrite.ranges.gained",
        Tags.of("handover", "taken-over"),
        "ranges taken over from an owner that stopped without handing them over, or had none",
        PartitionedDendrite.Metrics::rangesTakenOver);
    counter(
        registry,
        "dendrite.ranges.lost",
        Tags.empty(),
        "ranges this process stopped serving",
        PartitionedDendrite.Metrics::rangesLost);
    counter(
        registry,
        "dendrite.forwarded",
        Tags.of("operation", "get"),
        "gets sent to the range's owner",
        PartitionedDendrite.Metrics::forwardedGets);
    counter(
        registry,
        "dendrite.forwarded",
        Tags.of("operation", "write"),
        "writes sent to the range's owner",
        PartitionedDendrite.Metrics::forwardedWrites);
    counter(
        registry,
        "dendrite.forwarded.resent",
        Tags.empty(),
        "forwards sent again after the range moved",
        PartitionedDendrite.Metrics::resent);
  }

  private void counter(
      MeterRegistry registry,
      String name,
      Tags extra,
      String description,
      ToDoubleFunction<PartitionedDendrite.Metrics> value) {
    FunctionCounter.builder(name, dendrite, d -> value.applyAsDouble(d.metrics()))
        .tags(tags.and(extra))
        .description(description)
        .register(registry);
  }
}
