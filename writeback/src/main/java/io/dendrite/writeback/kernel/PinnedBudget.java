package io.dendrite.writeback.kernel;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of buffered writes this engine keeps pinned (counting every replica), against the configured limit
 * beyond which writes fall back to write-through. It counts what this engine pinned and unpinned; a server's own
 * pinned quota, shared with other processes, is enforced separately by its {@code PINNED_MEMORY_FULL} refusals.
 */
public final class PinnedBudget {
  private final long limit;
  private final AtomicLong used = new AtomicLong();

  public PinnedBudget(long limit) {
    this.limit = limit;
  }

  /** Takes {@code bytes} unless that would exceed the limit; a shrink (negative bytes) always succeeds. */
  public boolean tryReserve(long bytes) {
    while (true) {
      long current = used.get();
      if (bytes > 0 && current + bytes > limit) {
        return false;
      }
      if (used.compareAndSet(current, Math.max(0, current + bytes))) {
        return true;
      }
    }
  }

  /**
   * Records a change the engine could not refuse (a drain persisting a larger converted form); never below zero,
   * because another process may have pinned what this one unpins.
   */
  public void adjust(long bytes) {
    used.accumulateAndGet(bytes, (current, delta) -> Math.max(0, current + delta));
  }

  public long used() {
    return used.get();
  }
}
