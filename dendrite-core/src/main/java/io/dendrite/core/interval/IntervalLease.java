package io.dendrite.core.interval;

import io.dendrite.core.Interval;

/**
 * A lease granted by {@link IntervalLeases}. Closing it releases it; closing twice is harmless.
 *
 * <p>A lease lives for the lifetime its {@link IntervalLeases} was configured with. Once that has
 * passed it {@link #isExpired() is expired}: it no longer excludes anyone, even if not yet closed,
 * so that a holder that died cannot block an interval forever. A holder must therefore check
 * {@link #isExpired()} before it commits and abort (and retry) if the lease ran out, as the CPR
 * paper's Lemma 1.1 requires. A filler does ({@link #runIfUnexpired}); a writer cannot abort a
 * data-store write that is done, so one whose lease ran out repairs instead: it waits for the
 * fillers let in meanwhile ({@link IntervalLeases#awaitSharedLeasesGrantedNow}) and drops what
 * overlaps its write.
 *
 * @param <K> the key type of the interval
 */
public final class IntervalLease<K extends Comparable<? super K>> implements AutoCloseable {

  private final IntervalLeases<K> owner;
  private final Interval<K> interval;
  private final LeaseMode mode;
  private final long grantedAtNanos;
  private final long lifetimeNanos;

  IntervalLease(
      IntervalLeases<K> owner,
      Interval<K> interval,
      LeaseMode mode,
      long grantedAtNanos,
      long lifetimeNanos) {
    this.owner = owner;
    this.interval = interval;
    this.mode = mode;
    this.grantedAtNanos = grantedAtNanos;
    this.lifetimeNanos = lifetimeNanos;
  }

  /** The leased interval. */
  public Interval<K> interval() {
    return interval;
  }

  /** Shared or Exclusive. */
  public LeaseMode mode() {
    return mode;
  }

  /** Returns true once the lease's lifetime has passed, closed or not. */
  public boolean isExpired() {
    return nanosLeft(System.nanoTime()) <= 0;
  }

  /**
   * Runs {@code action} only if this lease has not expired, with the lease table locked so that no conflicting
   * lease can be granted while it runs: what the action does is ordered before any write the lease excluded.
   * For local state a holder publishes at the end of its work (the CPR paper's "check before commit", made
   * atomic).
   *
   * @return whether the action ran
   */
  public boolean runIfUnexpired(Runnable action) {
    return owner.runIfUnexpired(this, action);
  }

  /** Releases the lease, waking requests that wait for it. */
  @Override
  public void close() {
    owner.release(this);
  }

  long nanosLeft(long nowNanos) {
    return lifetimeNanos - (nowNanos - grantedAtNanos);
  }

  @Override
  public String toString() {
    return mode + " lease on " + interval;
  }
}
