package io.dendrite.iq.server;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code --pinned-memory} budget: what the server holds that it must never drop to make room, pinned items
 * (write-back's buffered writes) and pending markers (TARDIS's). Both draw on this one account, so that neither can
 * crowd the other out past the limit unnoticed.
 *
 * <p>A charge is checked and taken in one step: writers of different keys hold different stripes, and a check
 * followed by a separate charge let two of them both pass and overfill the budget.
 */
final class PinnedQuota {

  private final long limit;
  private final AtomicLong used = new AtomicLong();

  PinnedQuota(long limit) {
    this.limit = limit;
  }

  /**
   * Takes {@code delta} bytes if they fit, or nothing. A negative delta (something pinned shrank) always fits: it
   * gives bytes back.
   *
   * @return whether the bytes were taken
   */
  boolean tryCharge(long delta) {
    while (true) {
      long before = used.get();
      if (delta > 0 && before + delta > limit) {
        return false;
      }
      if (used.compareAndSet(before, before + delta)) {
        return true;
      }
    }
  }

  /** Whether {@code delta} more bytes would fit now; for staging a pinned value that is charged only when applied. */
  boolean fits(long delta) {
    return used.get() + delta <= limit;
  }

  /** Gives back bytes an earlier {@link #tryCharge} took. */
  void release(long bytes) {
    used.addAndGet(-bytes);
  }

  long used() {
    return used.get();
  }
}
