package io.dendrite.writeback.kernel;

import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A background thread's loop over its share of the drain passes (a group of pending-writes partitions, or a session
 * queue; each drains what it finds and says how much that was), resting for {@code idlePause} after a round in
 * which no pass found {@code busyAtLeast} items, or every pass failed: a write-back engine rests while its backlog is
 * below one batch, so that batches fill instead of draining one document per transaction. A pass that fails (data
 * store down past the retry deadline, a lost lease or cache server) leaves its work pending for a later round.
 *
 * <p>After a round in which a pass failed, the loop rests at least {@link #FIRST_FAILURE_PAUSE}, doubling with every
 * further such round up to {@link #LONGEST_FAILURE_PAUSE}: a failed pass may have held its documents' locks until the
 * retry deadline, and writers waiting for them poll every 50 ms at most ({@code Backoff.DEFAULT}); taking the same
 * locks again a few milliseconds later would keep those writers waiting round after round, past their lock timeout.
 */
public final class DrainWorker implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(DrainWorker.class);
  static final Duration FIRST_FAILURE_PAUSE = Duration.ofMillis(100);
  static final Duration LONGEST_FAILURE_PAUSE = Duration.ofSeconds(1);

  private final List<IntSupplier> passes;
  private final Duration idlePause;
  private final int busyAtLeast;
  private volatile boolean stopped;

  public DrainWorker(List<IntSupplier> passes, Duration idlePause, int busyAtLeast) {
    this.passes = passes;
    this.idlePause = idlePause;
    this.busyAtLeast = busyAtLeast;
  }

  @Override
  public void run() {
    Duration failurePause = Duration.ZERO;
    while (!stopped && !Thread.currentThread().isInterrupted()) {
      boolean foundWork = false;
      boolean failed = false;
      for (IntSupplier pass : passes) {
        try {
          foundWork |= pass.getAsInt() >= busyAtLeast;
        } catch (RuntimeException failure) {
          // Not counted as work found: an unreachable cache server fails fast, and the pause keeps
          // this from spinning.
          log.warn("drain pass failed; its work stays pending", failure);
          failed = true;
        }
      }
      failurePause =
          !failed
              ? Duration.ZERO
              : failurePause.isZero()
                  ? FIRST_FAILURE_PAUSE
                  : min(failurePause.multipliedBy(2), LONGEST_FAILURE_PAUSE);
      Duration pause = foundWork ? failurePause : max(idlePause, failurePause);
      if (!pause.isZero()) {
        try {
          Thread.sleep(pause.toMillis());
        } catch (InterruptedException interrupted) {
          return;
        }
      }
    }
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  public static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** Asks the loop to end after its current pass. */
  public void stop() {
    stopped = true;
  }
}
