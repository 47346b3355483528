package io.dendrite.core;

import java.util.List;

/**
 * How a write's change is kept in the cached result sets it touches <em>without rewriting them</em>: Dendrite appends
 * the change's byte form to each overlapping cached entry under the entry's Q lease ({@code iqappend}, staged with
 * the lease in one request and applied by the write's commit), and whoever reads the entry folds the appended changes
 * into its rows with {@link #apply}. A write then costs one request per cached entry and no decoding or re-encoding
 * of cached result sets; every 16 changes a write rewrites an entry whole, so
 * readers never fold many.
 *
 * <p>Every process that reads a range's cached entries must be built with the same {@code ChangeRecords}: the
 * records are part of the cached value's byte form.
 *
 * @param <K> the range attribute's type
 * @param <R> the row type
 * @param <C> the change type; writes whose change is of another type refresh entries with their {@link CacheUpdate}
 */
public interface ChangeRecords<K extends Comparable<? super K>, R, C> {

  /** The changes kept as records: a write's change that is an instance of it is appended. */
  Class<C> changeType();

  /** The change's byte form. */
  byte[] encode(C change);

  /**
   * Reads a change back from {@link #encode}'s output.
   *
   * @throws IllegalArgumentException if {@code record} is not one
   */
  C decode(byte[] record);

  /**
   * The entry's rows after {@code change}, as {@link CacheUpdate#apply} gives them; Dendrite keeps only the rows
   * whose attribute lies in the entry's interval, ordered by it, each once.
   *
   * @param entryInterval the interval whose complete result set {@code cachedRows} is
   * @param cachedRows the entry's rows before the change, ordered by attribute; do not modify
   */
  List<R> apply(Interval<K> entryInterval, List<R> cachedRows, C change);
}
