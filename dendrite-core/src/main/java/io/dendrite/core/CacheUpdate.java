package io.dendrite.core;

import java.util.List;

/**
 * Write-through's cache update: how a write changes one cached result set. Dendrite calls it once
 * per cached entry the write's interval touches, under that entry's Q lease, and keeps only the
 * returned rows whose attribute lies in the entry's interval.
 *
 * @param <K> the range attribute's type
 * @param <R> the row type
 */
@FunctionalInterface
public interface CacheUpdate<K extends Comparable<? super K>, R> {

  /**
   * Returns the entry's rows after the write.
   *
   * @param entryInterval the interval whose complete result set {@code cachedRows} is
   * @param cachedRows the entry's rows before the write, ordered by attribute; do not modify
   */
  List<R> apply(Interval<K> entryInterval, List<R> cachedRows);
}
