package io.dendrite.core;

/**
 * How Dendrite reads and stores the rows (documents) of a result set. Dendrite caches result sets as
 * lists of rows; it needs each row's value of the range attribute (to split and filter result sets),
 * an identity (to drop the duplicates that overlapping cached entries share) and a byte form.
 *
 * @param <K> the range attribute's type
 * @param <R> the row type
 */
public interface RowCodec<K extends Comparable<? super K>, R> {

  /** The row's value of the attribute the range predicates range over. */
  K attributeOf(R row);

  /** What makes two rows the same row, typically the primary key. */
  Object identityOf(R row);

  /** The row's byte form. */
  byte[] encode(R row);

  /** Reads a row back from {@link #encode}'s output. */
  R decode(byte[] bytes);
}
