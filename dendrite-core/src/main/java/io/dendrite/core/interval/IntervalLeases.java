package io.dendrite.core.interval;

import io.dendrite.core.Interval;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * LeMInT of the CPR paper: Shared and eXclusive leases on intervals, held inside one process.
 *
 * <p>A get that misses holds a {@link LeaseMode#SHARED} lease on its interval while it queries the
 * data store and fills the cache; a write holds an {@link LeaseMode#EXCLUSIVE} lease on its
 * interval while it changes the cache and the data store. Leases on overlapping intervals (closed
 * bounds: sharing an endpoint is overlapping) conflict unless both are Shared.
 *
 * <p><b>Fairness.</b> Requests are served first come, first served among those that conflict: a
 * request waits while an overlapping, conflicting request that arrived earlier is still waiting.
 * So once a writer waits for an interval, Shared requests on overlapping intervals that arrive
 * later queue behind it, and a steady stream of readers cannot starve it. Non-conflicting requests
 * (Shared after Shared, or disjoint intervals) never wait for each other.
 *
 * <p><b>Lifetime.</b> Every lease expires after the lifetime given at construction; an expired
 * lease no longer blocks anyone and is dropped the next time a request looks at it, so a holder
 * that died cannot block an interval forever. Waiting requests wake up when a lease that blocks
 * them expires.
 *
 * <p>Leases are not reentrant and not tied to threads: a thread that asks for a lease conflicting
 * with one it already holds waits for its own lease like anyone else.
 *
 * <p>Thread-safe: one mutex guards both trees, the granted leases and the waiting requests. The
 * number of entries is bounded by the number of threads using this object, so a single lock and
 * waking every waiter on a change is cheaper than finer machinery.
 *
 * @param <K> the key type of the intervals
 */
public final class IntervalLeases<K extends Comparable<? super K>> {

  private final long lifetimeNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final IntervalTree<K, IntervalLease<K>> grantedLeases = new IntervalTree<>();
  private final IntervalTree<K, Request<K>> waitingRequests = new IntervalTree<>();
  private long nextTicket;

  /**
   * Creates a lease table whose leases live for {@code lifetime}.
   *
   * @throws IllegalArgumentException if {@code lifetime} is not positive
   */
  public IntervalLeases(Duration lifetime) {
    if (lifetime.isNegative() || lifetime.isZero()) {
      throw new IllegalArgumentException("lease lifetime must be positive: " + lifetime);
    }
    this.lifetimeNanos = TimeUnit.NANOSECONDS.convert(lifetime);
  }

  /**
   * Acquires a lease on {@code interval}, waiting at most {@code timeout} for conflicting leases
   * to be released or to expire. A zero timeout tries once.
   *
   * @return the lease; close it to release it
   * @throws TimeoutException if the lease could not be granted within {@code timeout}
   * @throws InterruptedException if the thread was interrupted while waiting
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  public IntervalLease<K> acquire(Interval<K> interval, LeaseMode mode, Duration timeout)
      throws InterruptedException, TimeoutException {
    Objects.requireNonNull(interval, "interval");
    Objects.requireNonNull(mode, "mode");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative: " + timeout);
    }
    long timeoutNanos = TimeUnit.NANOSECONDS.convert(timeout); // saturates instead of overflowing
    long startNanos = System.nanoTime();
    lock.lockInterruptibly();
    try {
      Request<K> request = new Request<>(nextTicket++, interval, mode);
      boolean queued = false;
      try {
        while (true) {
          long now = System.nanoTime();
          long blockedNanos = nanosBlocked(request, now);
          if (blockedNanos == 0) {
            IntervalLease<K> lease = new IntervalLease<>(this, interval, mode, now, lifetimeNanos);
            grantedLeases.insert(interval, lease);
            return lease;
          }
          long remainingNanos = timeoutNanos - (now - startNanos);
          if (remainingNanos <= 0) {
            throw new TimeoutException(
                "no " + mode + " lease on " + interval + " within " + timeout);
          }
          if (!queued) {
            waitingRequests.insert(interval, request);
            queued = true;
          }
          changed.awaitNanos(Math.min(remainingNanos, blockedNanos));
        }
      } finally {
        if (queued) {
          waitingRequests.remove(interval, request);
          // Whether granted or abandoned, this request changed what later requests wait for.
          changed.signalAll();
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns 0 if {@code request} can be granted now, otherwise how long it may have to wait before
   * anything changes without a signal: until the first conflicting lease expires, or without limit
   * if it waits only for earlier requests (they signal when they leave the queue). Drops expired
   * leases it meets.
   */
  private long nanosBlocked(Request<K> request, long now) {
    long blockedNanos = 0;
    for (IntervalTree.Entry<K, IntervalLease<K>> entry :
        grantedLeases.overlapping(request.interval)) {
      IntervalLease<K> lease = entry.value();
      long leftNanos = lease.nanosLeft(now);
      if (leftNanos <= 0) {
        grantedLeases.remove(entry.interval(), lease);
      } else if (lease.mode().conflictsWith(request.mode)) {
        blockedNanos = blockedNanos == 0 ? leftNanos : Math.min(blockedNanos, leftNanos);
      }
    }
    if (blockedNanos == 0) {
      for (IntervalTree.Entry<K, Request<K>> entry :
          waitingRequests.overlapping(request.interval)) {
        Request<K> earlier = entry.value();
        if (earlier.ticket < request.ticket && earlier.mode.conflictsWith(request.mode)) {
          return Long.MAX_VALUE;
        }
      }
    }
    return blockedNanos;
  }

  /**
   * Waits until every {@link LeaseMode#SHARED} lease overlapping {@code interval} that is granted when this is called
   * has been released or has lapsed; leases granted later are not waited for. The wait is never longer than the
   * lifetime, cannot time out and is not cut short by an interrupt (the thread's interrupt status is kept for its
   * caller).
   *
   * <p>For a writer whose Exclusive lease lapsed before its data-store write ended: once this returns, no filler
   * that could have read the data store before that write can register a result any more. A released Shared lease's
   * {@link IntervalLease#runIfUnexpired} action has run, and a lapsed one's is refused, as both are decided under
   * this table's lock. Fillers granted later read after the write. Unlike a new Exclusive lease, this waits for no
   * other writer and queues behind nobody, so it cannot fail after the write is done.
   */
  public void awaitSharedLeasesGrantedNow(Interval<K> interval) {
    Objects.requireNonNull(interval, "interval");
    boolean interrupted = false;
    lock.lock();
    try {
      List<IntervalLease<K>> granted = new ArrayList<>();
      for (IntervalTree.Entry<K, IntervalLease<K>> entry : grantedLeases.overlapping(interval)) {
        if (entry.value().mode() == LeaseMode.SHARED) {
          granted.add(entry.value());
        }
      }
      while (true) {
        long now = System.nanoTime();
        granted.removeIf(
            lease -> lease.nanosLeft(now) <= 0 || !grantedLeases.contains(lease.interval(), lease));
        if (granted.isEmpty()) {
          return;
        }
        long waitNanos =
            granted.stream().mapToLong(lease -> lease.nanosLeft(now)).min().orElseThrow();
        try {
          changed.awaitNanos(waitNanos); // a release signals; a lapse is waited for
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      lock.unlock();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  boolean runIfUnexpired(IntervalLease<K> lease, Runnable action) {
    lock.lock();
    try {
      if (lease.nanosLeft(System.nanoTime()) <= 0) {
        return false;
      }
      action.run();
      return true;
    } finally {
      lock.unlock();
    }
  }

  void release(IntervalLease<K> lease) {
    lock.lock();
    try {
      // False if already released, or expired and dropped: then nobody is waiting for it.
      if (grantedLeases.remove(lease.interval(), lease)) {
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** A waiting acquisition; tickets order requests by arrival. */
  private record Request<K extends Comparable<? super K>>(
      long ticket, Interval<K> interval, LeaseMode mode) {}
}
