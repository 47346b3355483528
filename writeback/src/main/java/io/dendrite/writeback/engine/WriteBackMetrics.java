package io.dendrite.writeback.engine;

import java.time.Duration;
import java.util.Collection;

/**
 * A snapshot of a write-back engine's state, from its {@code metrics()} ({@link
 * io.dendrite.writeback.document.DocumentWriteBack#metrics()}, {@link
 * io.dendrite.writeback.session.SessionWriteBack#metrics()}).
 *
 * @param pendingWrites documents with a buffered write, over all pending-writes partitions (all processes)
 * @param oldestPendingAge how long the oldest of them has been waiting, {@link Duration#ZERO} when none is
 * @param pinnedBytes bytes of buffered writes this engine keeps pinned, every replica counted
 * @param drained buffered writes this engine applied to the data store and deleted since it started
 * @param drainRatePerSecond buffered writes drained per second since the previous snapshot (or the start)
 * @param storeRetries data-store operations retried because the store was unavailable
 * @param writeThroughFallbacks writes applied directly to the store because pinned memory was exhausted
 * @param undecodableMovedAside buffered values (documents' buffered writes, session objects) this engine could not
 *     decode and moved aside to {@code Undecodable:<key>} instead of applying them, since it started
 * @param unpinnedRefused values under this engine's keys that were not pinned, so no engine stored them (another
 *     user's {@code set}), which this engine refused to apply or serve since it started
 */
public record WriteBackMetrics(
    long pendingWrites,
    Duration oldestPendingAge,
    long pinnedBytes,
    long drained,
    double drainRatePerSecond,
    long storeRetries,
    long writeThroughFallbacks,
    long undecodableMovedAside,
    long unpinnedRefused) {

  /**
   * Several engines' metrics as one (the ranges of one Dendrite, each with its engine): counts and rates added, the
   * oldest pending age the oldest of theirs; all zero for none.
   */
  public static WriteBackMetrics total(Collection<WriteBackMetrics> engines) {
    return new WriteBackMetrics(
        engines.stream().mapToLong(WriteBackMetrics::pendingWrites).sum(),
        engines.stream()
            .map(WriteBackMetrics::oldestPendingAge)
            .max(Duration::compareTo)
            .orElse(Duration.ZERO),
        engines.stream().mapToLong(WriteBackMetrics::pinnedBytes).sum(),
        engines.stream().mapToLong(WriteBackMetrics::drained).sum(),
        engines.stream().mapToDouble(WriteBackMetrics::drainRatePerSecond).sum(),
        engines.stream().mapToLong(WriteBackMetrics::storeRetries).sum(),
        engines.stream().mapToLong(WriteBackMetrics::writeThroughFallbacks).sum(),
        engines.stream().mapToLong(WriteBackMetrics::undecodableMovedAside).sum(),
        engines.stream().mapToLong(WriteBackMetrics::unpinnedRefused).sum());
  }
}
