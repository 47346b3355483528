package io.dendrite.core;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Publishes a Dendrite's gets under Micrometer's cache meter names, every meter tagged {@code
 * cache=<collection>.<domain>} plus the caller's tags, so that dashboards built for other caches read it: a {@link
 * RangeCache}'s (one process), or what a Dendrite over many processes reports for this process (its {@code
 * PartitionedMeters} binds these, with the counts its {@code cacheMetrics} adds up). The one place these names are
 * defined:
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>value</th></tr>
 *   <tr><td>{@code cache.gets{result=hit, tier=local}}</td><td>function counter</td><td>gets answered from the near
 *       cache (this process's heap, no round trip)</td></tr>
 *   <tr><td>{@code cache.gets{result=hit, tier=remote}}</td><td>function counter</td><td>gets answered from the
 *       cache servers</td></tr>
 *   <tr><td>{@code cache.gets{result=miss, tier=remote}}</td><td>function counter</td><td>gets that queried the
 *       data store</td></tr>
 *   <tr><td>{@code cache.puts{tier=remote}}</td><td>function counter</td><td>results put into the cache servers:
 *       by misses (one that lost its I lease to a write counts too) and refreshed by writes</td></tr>
 *   <tr><td>{@code cache.evictions{tier=local}}</td><td>function counter</td><td>results the near cache evicted to
 *       stay within its bound</td></tr>
 *   <tr><td>{@code cache.size{tier=local}}</td><td>gauge</td><td>results the near cache holds</td></tr>
 *   <tr><td>{@code cache.size{tier=remote}}</td><td>gauge</td><td>results registered in the cache servers
 *       (PrInT)</td></tr>
 *   <tr><td>{@code dendrite.cache.near.weight}</td><td>gauge, bytes</td><td>the near cache's results, as the cache
 *       servers encode them</td></tr>
 *   <tr><td>{@code dendrite.writes}</td><td>function counter</td><td>inserts, updates and deletes</td></tr>
 * </table>
 *
 * <p>Micrometer is an optional dependency of this module: add {@code io.micrometer:micrometer-core} to use this
 * class.
 */
public final class DendriteMeters implements MeterBinder {
  /**
   * The Dendrite the meters read, which Micrometer holds weakly, as it does every function meter's object: the
   * application keeps it.
   */
  private final Object dendrite;

  private final Function<Object, DendriteMetrics> metrics;
  private final Tags tags;

  @SuppressWarnings("unchecked")
  private <D extends Dendrite<?, ?>> DendriteMeters(
      D dendrite, Function<? super D, DendriteMetrics> metrics, Iterable<Tag> tags) {
    this.dendrite = Objects.requireNonNull(dendrite, "dendrite");
    this.metrics = (Function<Object, DendriteMetrics>) Objects.requireNonNull(metrics, "metrics");
    this.tags = Tags.of(tags).and("cache", dendrite.rangeName());
  }

  /** Meters for {@code dendrite}, tagged {@code cache=<collection>.<domain>} and {@code tags}. */
  public static DendriteMeters of(RangeCache<?, ?> dendrite, Tag... tags) {
    return new DendriteMeters(dendrite, RangeCache::metrics, Tags.of(tags));
  }

  /**
   * Meters for a Dendrite that counts its gets as {@code metrics} reads them, e.g. one over many processes, whose
   * ranges' counts {@code PartitionedDendrite#cacheMetrics} adds up ({@code PartitionedMeters} binds these).
   */
  public static <D extends Dendrite<?, ?>> DendriteMeters of(
      D dendrite, Function<? super D, DendriteMetrics> metrics, Tag... tags) {
    return new DendriteMeters(dendrite, metrics, Tags.of(tags));
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    counter(registry, "cache.gets", "hit", "local", m -> m.nearHits());
    counter(registry, "cache.gets", "hit", "remote", m -> m.hits() - m.nearHits());
    counter(registry, "cache.gets", "miss", "remote", DendriteMetrics::misses);
    FunctionCounter.builder("cache.puts", dendrite, d -> puts(read(d)))
        .tags(tags.and("tier", "remote"))
        .description("results put into the cache servers by misses and refreshed by writes")
        .register(registry);
    FunctionCounter.builder("cache.evictions", dendrite, d -> read(d).nearEvictions())
        .tags(tags.and("tier", "local"))
        .description("results the near cache evicted to stay within its bound")
        .register(registry);
    Gauge.builder("cache.size", dendrite, d -> read(d).nearEntries())
        .tags(tags.and("tier", "local"))
        .description("results the near cache holds")
        .register(registry);
    Gauge.builder("cache.size", dendrite, d -> read(d).cachedEntries())
        .tags(tags.and("tier", "remote"))
        .description("results registered in the cache servers")
        .register(registry);
    Gauge.builder("dendrite.cache.near.weight", dendrite, d -> read(d).nearBytes())
        .tags(tags)
        .baseUnit("bytes")
        .description("the near cache's results, as the cache servers encode them")
        .register(registry);
    FunctionCounter.builder("dendrite.writes", dendrite, d -> read(d).writes())
        .tags(tags)
        .description("inserts, updates and deletes")
        .register(registry);
  }

  private DendriteMetrics read(Object state) {
    return metrics.apply(state);
  }

  private static double puts(DendriteMetrics metrics) {
    return metrics.misses() + metrics.entriesRefreshed();
  }

  private void counter(
      MeterRegistry registry,
      String name,
      String result,
      String tier,
      ToDoubleFunction<DendriteMetrics> value) {
    FunctionCounter.builder(name, dendrite, d -> value.applyAsDouble(read(d)))
        .tags(tags.and("result", result).and("tier", tier))
        .description("gets: result " + result + ", tier " + tier)
        .register(registry);
  }
}
