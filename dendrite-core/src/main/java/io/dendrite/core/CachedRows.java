package io.dendrite.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * The rows a cached value stands for: its result set with the change records appended since folded in, kept to the
 * entry's interval. One class, so that a {@link Dendrite} and a {@link CachedReads} of another process read a value
 * the same way.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
final class CachedRows<K extends Comparable<? super K>, R> {
  private final RowCodec<K, R> rows;
  private final ResultSetCodec<R> resultSets;
  private final ChangeRecords<K, R, ?> changeRecords;

  /** {@code changeRecords}: null when the Dendrite keeps none. */
  CachedRows(RowCodec<K, R> rows, ChangeRecords<K, R, ?> changeRecords) {
    this.rows = rows;
    this.resultSets = new ResultSetCodec<>(rows);
    this.changeRecords = changeRecords;
  }

  /**
   * The rows of {@code value}, the cached value of {@code key} holding the result set of {@code interval}; {@code
   * manyRecords} hears the number of change records when there are {@link CacheParts#RECORDS_BEFORE_REWRITE} or more.
   *
   * @throws IllegalStateException if the value holds change records and no {@link ChangeRecords} reads them
   */
  List<R> rowsOf(Interval<K> interval, String key, byte[] value, IntConsumer manyRecords) {
    ResultSetCodec.Decoded<R> decoded = resultSets.decode(value);
    if (decoded.changes().isEmpty()) {
      return decoded.rows();
    }
    if (changeRecords == null) {
      throw new IllegalStateException(
          "the cached value of "
              + key
              + " holds change records, and this"
              + " Dendrite was built without ChangeRecords to read them");
    }
    if (decoded.changes().size() >= CacheParts.RECORDS_BEFORE_REWRITE) {
      manyRecords.accept(decoded.changes().size());
    }
    List<R> folded = decoded.rows();
    for (byte[] record : decoded.changes()) {
      folded = withRecord(interval, folded, record);
    }
    return folded;
  }

  /**
   * {@code rows}, the result of {@code interval}, with one appended change record folded in: what a reader of the
   * cached value computes for each record, and what the near cache applies to its copy after a write appended one.
   */
  List<R> withRecord(Interval<K> interval, List<R> rows, byte[] record) {
    return folding(record).apply(interval, rows);
  }

  /** A change record folded into a result's rows, as {@link #withRecord} does. */
  interface Fold<K extends Comparable<? super K>, R> {
    List<R> apply(Interval<K> interval, List<R> rows);
  }

  /**
   * {@code record} decoded once, to fold into the rows of several results: a write that changed many results in the
   * near cache applies its record to each.
   */
  Fold<K, R> folding(byte[] record) {
    return foldOf(changeRecords, record);
  }

  private <C> Fold<K, R> foldOf(ChangeRecords<K, R, C> records, byte[] record) {
    C change = records.decode(record);
    return (interval, rows) ->
        normalize(interval, records.apply(interval, Collections.unmodifiableList(rows), change));
  }

  /** Rows of {@code interval} only, each once, ordered by attribute. */
  List<R> normalize(Interval<K> interval, Collection<R> found) {
    Map<Object, R> unique = new LinkedHashMap<>();
    for (R row : found) {
      K attribute = rows.attributeOf(row);
      if (attribute != null
          && attribute.compareTo(interval.lo()) >= 0
          && attribute.compareTo(interval.hi()) <= 0) {
        unique.putIfAbsent(rows.identityOf(row), row);
      }
    }
    List<R> result = new ArrayList<>(unique.values());
    result.sort(Comparator.comparing(rows::attributeOf));
    return result;
  }
}
