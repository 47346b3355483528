package io.dendrite.writeback;

import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A background thread's loop over its share of the drain passes (a group of pending-writes partitions, or a session
 * queue; each drains what it finds and says how much that was), resting for {@code idlePause} after a round in
 * which no pass found {@code busyAtLeast} items, or every pass failed: a write-back engine rests while its backlog is
 * below one batch, so that batches fill instead of draining one document per transaction. A pass that fails (data store down past the retry deadline, a lost lease or cache
 * server) leaves its work pending for a later round.
 */
final class DrainWorker implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(DrainWorker.class);

  private final List<IntSupplier> passes;
  private final Duration idlePause;
  private final int busyAtLeast;
  private volatile boolean stopped;

  DrainWorker(List<IntSupplier> passes, Duration idlePause, int busyAtLeast) {
    this.passes = passes;
    this.idlePause = idlePause;
    this.busyAtLeast = busyAtLeast;
  }

  @Override
  public void run() {
    while (!stopped && !Thread.currentThread().isInterrupted()) {
      boolean foundWork = false;
      for (IntSupplier pass : passes) {
        try {
          foundWork |= pass.getAsInt() >= busyAtLeast;
        } catch (RuntimeException failed) {
          // Not counted as work found: an unreachable cache server fails fast, and the pause keeps this from spinning.
          log.warn("drain pass failed; its work stays pending", failed);
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

  /** Asks the loop to end after its current pass. */
  void stop() {
    stopped = true;
  }
}
