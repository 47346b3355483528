package io.dendrite.core;

import java.util.Objects;
import java.util.function.Function;

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

  /**
   * The codec of rows that are Java records of common value types (primitives and their boxes, {@code String}, {@code
   * byte[]}, {@code BigDecimal}, {@code Instant}, {@code LocalDate}, {@code UUID}, enums), in one line: {@code
   * RowCodec.ofRecord(Score.class, Score::points, Score::id)}.
   *
   * @param attribute the row's value of the attribute the range predicates range over
   * @param identity what makes two rows the same row, typically the primary key
   * @throws IllegalArgumentException if {@code type} is not such a record, or cannot be read from this module (make
   *     it public in an exported package, or open its package to {@code io.dendrite.core})
   */
  static <K extends Comparable<? super K>, R extends Record> RowCodec<K, R> ofRecord(
      Class<R> type, Function<? super R, ? extends K> attribute, Function<? super R, ?> identity) {
    Objects.requireNonNull(attribute, "attribute");
    Objects.requireNonNull(identity, "identity");
    RecordBytes<R> bytes = RecordBytes.of(type);
    return new RowCodec<>() {
      @Override
      public K attributeOf(R row) {
        return attribute.apply(row);
      }

      @Override
      public Object identityOf(R row) {
        return identity.apply(row);
      }

      @Override
      public byte[] encode(R row) {
        return bytes.encode(row);
      }

      @Override
      public R decode(byte[] encoded) {
        return bytes.decode(encoded);
      }
    };
  }
}
