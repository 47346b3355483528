package io.dendrite.writeback.kernel;

/**
 * Drained items per second between one observation of a monotonic "drained" count and the next. Each observer
 * keeps its own, so that an application polling {@code metrics()} and a metrics registry scraping it do not
 * shorten each other's windows.
 */
final class DrainRate {
  private long drainedBefore;
  private long nanosBefore = System.nanoTime();

  /** The rate since the previous call (or since this was made); then starts the next window. */
  public synchronized double observe(long drainedNow) {
    long now = System.nanoTime();
    double rate = (drainedNow - drainedBefore) / Math.max(1e-9, (now - nanosBefore) / 1e9);
    drainedBefore = drainedNow;
    nanosBefore = now;
    return rate;
  }
}
