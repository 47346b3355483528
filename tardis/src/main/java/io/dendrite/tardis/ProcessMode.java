package io.dendrite.tardis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This process's {@link Mode} (the thesis' {@code DataStoreAvailable}, §4.3.5): one volatile field that foreground
 * threads and recovery workers share, read on every request and changed rarely. Correctness never depends on it:
 * every request looks up its own document's buffered write where the action depends on it, so a process whose mode
 * is late (or differs from another process's) does more or less work, never the wrong thing.
 *
 * <ul>
 *   <li>any mode → failed: a write, a recovery apply or a probe met the data store down;
 *   <li>failed → recovery: {@code recoverAfterSuccesses} applies or probes went through since (the thesis' p);
 *   <li>recovery → normal: nothing is listed as buffered any more.
 * </ul>
 */
final class ProcessMode {
  private static final Logger log = LoggerFactory.getLogger(ProcessMode.class);

  private final int recoverAfterSuccesses;
  private final long checkIntervalNanos;
  private volatile Mode mode = Mode.NORMAL;
  private int successes;
  private final AtomicLong nextCheck = new AtomicLong(System.nanoTime());
  final LongAdder transitions = new LongAdder();

  ProcessMode(int recoverAfterSuccesses, Duration checkInterval) {
    this.recoverAfterSuccesses = recoverAfterSuccesses;
    this.checkIntervalNanos = checkInterval.toNanos();
  }

  Mode current() {
    return mode;
  }

  /** The data store failed an operation. */
  synchronized void failed(RuntimeException why) {
    successes = 0;
    if (mode != Mode.FAILED) {
      change(Mode.FAILED, why.toString());
    }
  }

  /** An operation on the data store went through. */
  synchronized void succeeded() {
    if (mode == Mode.FAILED && ++successes >= recoverAfterSuccesses) {
      change(Mode.RECOVERY, successes + " data-store operation(s) went through");
    }
  }

  /** Nothing is listed as buffered: recovery is over (no other change). */
  synchronized void nothingBuffered() {
    if (mode == Mode.RECOVERY) {
      change(Mode.NORMAL, "no buffered write is left");
    }
  }

  /** Something is listed as buffered (found when this process started): normal mode becomes recovery. */
  synchronized void somethingBuffered() {
    if (mode == Mode.NORMAL) {
      change(Mode.RECOVERY, "buffered writes are listed");
    }
  }

  /**
   * Whether the caller should check the mode's way out now (a probe of the data store in failed mode, a look at the
   * listings in recovery): true for one caller per check interval, so that foreground requests move the mode on
   * without recovery workers, at a bounded cost.
   */
  boolean checkDue() {
    long due = nextCheck.get();
    long now = System.nanoTime();
    return now - due >= 0 && nextCheck.compareAndSet(due, now + checkIntervalNanos);
  }

  private void change(Mode next, String why) {
    log.info("TARDIS mode {} -> {}: {}", mode, next, why);
    mode = next;
    transitions.increment();
  }
}
