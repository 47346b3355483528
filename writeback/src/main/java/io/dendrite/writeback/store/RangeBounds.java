package io.dendrite.writeback.store;

import io.dendrite.writeback.change.FieldValues;

/**
 * The argument checks of {@link DataStore#readRange}, for implementations to run before they send anything, so that
 * every store refuses the same bounds with the same message.
 */
public final class RangeBounds {
  private RangeBounds() {}

  /**
   * Checks the arguments of a {@link DataStore#readRange} call.
   *
   * @throws IllegalArgumentException when the collection or field name is malformed, a bound is null, the bounds
   *     are not comparable values of one type, or lower &gt; upper
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static void check(String collection, String field, Object lowerBound, Object upperBound) {
    if (collection == null || collection.isBlank()) {
      throw new IllegalArgumentException("collection must be a non-blank name, got " + collection);
    }
    FieldValues.checkFieldName(field);
    if (lowerBound == null || upperBound == null) {
      throw new IllegalArgumentException(
          "range bounds must not be null, got [" + lowerBound + ", " + upperBound + "]");
    }
    if (lowerBound.getClass() != upperBound.getClass() || !(lowerBound instanceof Comparable)) {
      throw new IllegalArgumentException(
          "range bounds must be comparable values of one type, got "
              + lowerBound.getClass().getName()
              + " and "
              + upperBound.getClass().getName());
    }
    FieldValues.check(lowerBound);
    if (((Comparable) lowerBound).compareTo(upperBound) > 0) {
      throw new IllegalArgumentException(
          "lower bound " + lowerBound + " is above upper bound " + upperBound);
    }
  }
}
