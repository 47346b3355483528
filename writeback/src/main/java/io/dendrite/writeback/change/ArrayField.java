package io.dendrite.writeback.change;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The precondition the array operators share: the field is missing or holds an array. */
final class ArrayField {
  private ArrayField() {}

  /**
   * A mutable copy of the array in {@code field}, empty when the field is missing.
   *
   * @throws IllegalArgumentException when the field holds something other than an array, as MongoDB refuses
   */
  static List<Object> copyOf(Map<String, Object> fields, String field, String operator) {
    if (!fields.containsKey(field)) {
      return new ArrayList<>();
    }
    if (fields.get(field) instanceof List<?> list) {
      return new ArrayList<>(list);
    }
    throw new IllegalArgumentException(
        "cannot "
            + operator
            + " on field '"
            + field
            + "' holding non-array value "
            + fields.get(field));
  }
}
