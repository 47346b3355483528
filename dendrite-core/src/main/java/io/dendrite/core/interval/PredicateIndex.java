package io.dendrite.core.interval;

import io.dendrite.core.Interval;
import java.util.List;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * PrInT of the CPR paper: which cached result set belongs to which predicate interval.
 *
 * <p>A get that misses registers its interval with the key of the result set it cached; a write
 * asks {@link #impactedBy} for every cached result set its interval touches (overlapping intervals,
 * which include those contained in it and those containing it), then updates or deletes them and
 * {@link #unregister unregisters} the deleted ones.
 *
 * <p>An (interval, key) pair is registered at most once: two readers that miss on the same
 * predicate at once (their Shared leases are compatible) both register it, and a single later
 * unregister must still remove it.
 *
 * <p>Thread-safe: queries share a read lock, changes take the write lock.
 *
 * @param <K> the key type of the predicate's attribute
 * @param <C> the cache key type
 */
public final class PredicateIndex<K extends Comparable<? super K>, C> {

  private final IntervalTree<K, C> tree = new IntervalTree<>();
  private final ReadWriteLock lock = new ReentrantReadWriteLock();

  /** Creates an empty index. */
  public PredicateIndex() {}

  /**
   * Records that {@code cacheKey} holds the result set of the predicate {@code interval}.
   *
   * @return false if this pair was already registered
   */
  public boolean register(Interval<K> interval, C cacheKey) {
    lock.writeLock().lock();
    try {
      if (tree.contains(interval, cacheKey)) {
        return false;
      }
      tree.insert(interval, cacheKey);
      return true;
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Forgets the pair.
   *
   * @return false if it was not registered
   */
  public boolean unregister(Interval<K> interval, C cacheKey) {
    lock.writeLock().lock();
    try {
      return tree.remove(interval, cacheKey);
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Returns the cached result sets a write on {@code written} may change: those whose interval
   * overlaps it, in ascending interval order.
   */
  public List<IntervalTree.Entry<K, C>> impactedBy(Interval<K> written) {
    lock.readLock().lock();
    try {
      return tree.overlapping(written);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Returns the cached result sets whose interval contains {@code predicate} (an equal interval
   * included): each holds every row the predicate selects, so any of them can answer it.
   */
  public List<IntervalTree.Entry<K, C>> containing(Interval<K> predicate) {
    lock.readLock().lock();
    try {
      return tree.containing(predicate);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Returns every registered pair, in ascending interval order. */
  public List<IntervalTree.Entry<K, C>> all() {
    lock.readLock().lock();
    try {
      List<IntervalTree.Entry<K, C>> all = new java.util.ArrayList<>(tree.size());
      tree.iterator().forEachRemaining(all::add);
      return all;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Returns the number of registered pairs. */
  public int size() {
    lock.readLock().lock();
    try {
      return tree.size();
    } finally {
      lock.readLock().unlock();
    }
  }
}
