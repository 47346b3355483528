package io.dendrite.writeback;

import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A background thread's loop: over its share of the pending-writes partitions, draining every listed document,
 * and resting for {@code idlePause} after a pass that found nothing or failed. A drain that fails (data store down
 * past the retry deadline, a lost lease or cache server) leaves the buffered write listed for a later pass.
 */
final class DrainWorker implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(DrainWorker.class);

  private final BufferedWrites bufferedWrites;
  private final List<PendingWritesPartition> partitions;
  private final Duration idlePause;
  private volatile boolean stopped;

  DrainWorker(BufferedWrites bufferedWrites, List<PendingWritesPartition> partitions, Duration idlePause) {
    this.bufferedWrites = bufferedWrites;
    this.partitions = partitions;
    this.idlePause = idlePause;
  }

  @Override
  public void run() {
    while (!stopped && !Thread.currentThread().isInterrupted()) {
      boolean foundWork = false;
      for (PendingWritesPartition partition : partitions) {
        try {
          foundWork |= drainOnce(partition, bufferedWrites) > 0;
        } catch (RuntimeException failed) {
          // Not counted as work found: an unreachable cache server fails fast, and the pause keeps this from spinning.
          log.warn("drain pass failed; its buffered writes stay pending", failed);
        }
      }
      if (!foundWork) {
        try {
          Thread.sleep(idlePause.toMillis());
        } catch (InterruptedException interrupted) {
          return;
        }
      }
    }
  }

  /** Asks the loop to end after its current drain. */
  void stop() {
    stopped = true;
  }

  /** Drains every document {@code partition} lists now; returns how many it found. */
  static int drainOnce(PendingWritesPartition partition, BufferedWrites bufferedWrites) {
    List<PendingWritesPartition.Entry> entries = partition.entries();
    for (PendingWritesPartition.Entry entry : entries) {
      bufferedWrites.drain(entry.key());
    }
    return entries.size();
  }
}
