package io.dendrite.core.interval;

import io.dendrite.core.Interval;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The index half of BuWrInT in the CPR paper: buffered writes by the interval they touch, in the
 * serial order in which they were applied to the cache.
 *
 * <p>Writes on overlapping intervals are serialized by Exclusive leases ({@link IntervalLeases}),
 * so the order of {@link #append} calls is their serial order; each appended write gets the next
 * sequence number. Before a write is appended, {@link #overlapping} on its interval yields the
 * buffered writes it depends on; a read miss uses the same query to find the buffered writes it
 * must apply first, oldest first. What a buffered write contains and how it is applied is the
 * business of the write-back module; this class only indexes it.
 *
 * <p>Thread-safe: queries share a read lock, changes take the write lock.
 *
 * @param <K> the key type of the written attribute
 * @param <W> the buffered write (or the key it is stored under)
 */
public final class BufferedWriteIndex<K extends Comparable<? super K>, W> {

  /**
   * One indexed buffered write.
   *
   * @param sequence its position in the serial order of this index, starting at 1
   * @param interval the interval the write touches
   * @param write the buffered write
   * @param <K> the key type of the written attribute
   * @param <W> the buffered write type
   */
  public record Entry<K extends Comparable<? super K>, W>(
      long sequence, Interval<K> interval, W write) {}

  private static final Comparator<Entry<?, ?>> SERIAL_ORDER =
      Comparator.comparingLong(Entry::sequence);

  private final IntervalTree<K, Entry<K, W>> tree = new IntervalTree<>();
  private final ReadWriteLock lock = new ReentrantReadWriteLock();
  private long lastSequence;

  /** Creates an empty index. */
  public BufferedWriteIndex() {}

  /** Indexes {@code write} after every write already indexed. */
  public Entry<K, W> append(Interval<K> interval, W write) {
    lock.writeLock().lock();
    try {
      Entry<K, W> entry = new Entry<>(++lastSequence, interval, write);
      tree.insert(interval, entry);
      return entry;
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Returns the indexed writes whose interval overlaps {@code interval}, oldest first. */
  public List<Entry<K, W>> overlapping(Interval<K> interval) {
    List<IntervalTree.Entry<K, Entry<K, W>>> found;
    lock.readLock().lock();
    try {
      found = tree.overlapping(interval);
    } finally {
      lock.readLock().unlock();
    }
    return found.stream().map(IntervalTree.Entry::value).sorted(SERIAL_ORDER).toList();
  }

  /** Returns every indexed write, oldest first (to compact the log that rebuilds the index, for example). */
  public List<Entry<K, W>> entries() {
    List<Entry<K, W>> all = new ArrayList<>();
    lock.readLock().lock();
    try {
      tree.iterator().forEachRemaining(found -> all.add(found.value()));
    } finally {
      lock.readLock().unlock();
    }
    all.sort(SERIAL_ORDER);
    return all;
  }

  /**
   * Removes an entry once its write has been applied to the data store.
   *
   * @return false if it was not indexed (already removed)
   */
  public boolean remove(Entry<K, W> entry) {
    lock.writeLock().lock();
    try {
      return tree.remove(entry.interval(), entry);
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Returns the number of indexed writes. */
  public int size() {
    lock.readLock().lock();
    try {
      return tree.size();
    } finally {
      lock.readLock().unlock();
    }
  }
}
