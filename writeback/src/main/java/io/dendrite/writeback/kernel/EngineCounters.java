package io.dendrite.writeback.kernel;

import io.dendrite.writeback.engine.WriteBackMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a write-back engine counts in-process (drained, store retries, write-through fallbacks, undecodable values
 * moved aside), and the {@link
 * WriteBackMetrics} snapshot it makes of them together with what is pending in the cache.
 */
public final class EngineCounters {
  public final LongAdder drained = new LongAdder();
  public final LongAdder retries = new LongAdder();
  public final LongAdder fallbacks = new LongAdder();
  public final LongAdder undecodable = new LongAdder();
  private final DrainRate drainRate = new DrainRate();
  private final Clock clock;

  public EngineCounters(Clock clock) {
    this.clock = clock;
  }

  /**
   * @param pendingSince when each pending item (buffered write or session) was registered
   * @param pinnedBytes the engine's pinned bytes, every replica counted
   * @param unpinnedRefused what {@link PinnedReplicas#unpinnedRefused} counts
   */
  public WriteBackMetrics snapshot(
      List<Instant> pendingSince, long pinnedBytes, long unpinnedRefused) {
    Instant oldest = pendingSince.stream().min(Instant::compareTo).orElse(null);
    Duration oldestAge = oldest == null ? Duration.ZERO : Duration.between(oldest, clock.instant());
    long drainedNow = drained.sum();
    return new WriteBackMetrics(
        pendingSince.size(),
        oldestAge.isNegative() ? Duration.ZERO : oldestAge,
        pinnedBytes,
        drainedNow,
        drainRate.observe(drainedNow),
        retries.sum(),
        fallbacks.sum(),
        undecodable.sum(),
        unpinnedRefused);
  }
}
