package io.dendrite.spring.boot;

import io.dendrite.coordination.PartitionedDendrite;
import io.dendrite.coordination.PartitionedMeters;
import io.dendrite.core.DendriteMeters;
import io.dendrite.core.RangeCache;
import io.dendrite.tardis.TardisMeters;
import io.dendrite.tardis.TardisRanges;
import io.dendrite.writeback.WriteBack;
import io.dendrite.writeback.WriteBackMeters;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Micrometer meters of every Dendrite {@link Dendrites} builds, bound as it is built, each tagged {@code
 * cache=<collection>.<domain>}: Micrometer's cache meters ({@code cache.gets{result=hit|miss}}, {@code cache.puts},
 * {@code cache.evictions}, {@code cache.size}: {@link DendriteMeters}) for a Dendrite of one process; for one over many
 * processes the same cache meters, counting what this process answered (its direct hits and its ranges' gets as their
 * owner), with owned ranges and takeovers ({@code dendrite.ranges.*}), all from {@link PartitionedMeters}; the buffered-write
 * backlog, its oldest write's age and pinned bytes ({@code dendrite.writeback.*}: {@link WriteBackMeters}) under
 * write-back; TARDIS's mode and backlog ({@code dendrite.tardis.*}: {@link TardisMeters}). Each module's meters only
 * when the module is present.
 */
@AutoConfiguration(
    after = DendriteAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"
    })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({MeterRegistry.class, Dendrites.class})
public class DendriteMetricsAutoConfiguration {

  private static Tag cacheTag(ManagedDendrite<?, ?> dendrite) {
    return Tag.of("cache", dendrite.rangeName());
  }

  @Bean
  DendriteListener dendriteCacheMeters(MeterRegistry registry) {
    return dendrite -> {
      if (dendrite.dendrite() instanceof RangeCache<?, ?> oneProcess) {
        DendriteMeters.of(oneProcess).bindTo(registry);
      }
    };
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(PartitionedMeters.class)
  static class ManyProcessesMeters {
    @Bean
    DendriteListener dendriteRangeMeters(MeterRegistry registry) {
      return dendrite -> {
        if (dendrite.dendrite() instanceof PartitionedDendrite<?, ?> manyProcesses) {
          PartitionedMeters.of(manyProcesses).bindTo(registry);
        }
      };
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(WriteBackMeters.class)
  static class WriteBackMetersConfiguration {
    @Bean
    DendriteListener dendriteWriteBackMeters(MeterRegistry registry) {
      return dendrite ->
          dendrite.buffered().stream()
              .filter(buffered -> buffered.source() instanceof WriteBack)
              .forEach(
                  buffered ->
                      WriteBackMeters.of((WriteBack) buffered.source(), cacheTag(dendrite))
                          .bindTo(registry));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(TardisMeters.class)
  static class TardisMetersConfiguration {
    @Bean
    DendriteListener dendriteTardisMeters(MeterRegistry registry) {
      return dendrite ->
          dendrite.buffered().stream()
              .filter(buffered -> buffered.source() instanceof TardisRanges)
              .forEach(
                  buffered ->
                      TardisMeters.of((TardisRanges) buffered.source(), cacheTag(dendrite))
                          .bindTo(registry));
    }
  }
}
