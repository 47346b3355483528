package io.dendrite.core;

import java.util.ArrayList;
import java.util.List;

/**
 * How a write changes one cached result set (write-through and write-back). Dendrite calls it once per cached entry
 * the write's interval touches, under that entry's Q lease, with the entry's rows before the write.
 *
 * <p>The contract: return the entry's rows after the write, in any order. Dendrite keeps those whose attribute lies in
 * the entry's interval, one per identity ({@link RowCodec#identityOf}; of a row returned twice, the first), and orders
 * them by attribute. So add the written row whether or not {@code cachedRows} holds it (an insert, or an update that
 * moves a row into the interval, finds it absent), remove the version it replaces, and leave rows that moved out of the
 * interval to Dendrite. {@link #putting} and {@link #removing} are the two common updates.
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

  /** The update of a write that inserts or replaces {@code row}: its old version, if cached, is replaced. */
  static <K extends Comparable<? super K>, R> CacheUpdate<K, R> putting(
      RowCodec<K, R> rows, R row) {
    Object identity = rows.identityOf(row);
    return (interval, cached) -> {
      List<R> after = new ArrayList<>(cached.size() + 1);
      for (R old : cached) {
        if (!rows.identityOf(old).equals(identity)) {
          after.add(old);
        }
      }
      after.add(row);
      return after;
    };
  }

  /** The update of a write that deletes the row whose identity is {@code identity}. */
  static <K extends Comparable<? super K>, R> CacheUpdate<K, R> removing(
      RowCodec<K, R> rows, Object identity) {
    return (interval, cached) -> {
      List<R> after = new ArrayList<>(cached);
      after.removeIf(row -> rows.identityOf(row).equals(identity));
      return after;
    };
  }
}
