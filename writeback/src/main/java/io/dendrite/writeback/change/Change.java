package io.dendrite.writeback.change;

import java.math.BigDecimal;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One change to one document or row, as an immutable value that any process can apply later (never a lambda).
 *
 * <p>Field changes follow MongoDB's update operators on top-level fields, with MongoDB's semantics on an existing
 * document; on a document that does not exist they do nothing (an update, not an upsert). {@link Insert} makes the
 * document exactly its fields whether or not it existed (an upsert, hence idempotent); {@link Delete} removes it.
 *
 * <p>A relational row takes the subset {@link #isRowChange() row changes}: {@link Set} is a column assignment,
 * {@link Inc} a column increment, {@link Insert} and {@link Delete} whole-row writes.
 *
 * <table>
 *   <caption>Changes and whether applying one twice equals applying it once</caption>
 *   <tr><th>change</th><th>MongoDB</th><th>SQL</th><th>idempotent</th></tr>
 *   <tr><td>{@link Set}</td><td>{@code $set}</td><td>{@code c = ?}</td><td>yes</td></tr>
 *   <tr><td>{@link Unset}</td><td>{@code $unset}</td><td>-</td><td>yes</td></tr>
 *   <tr><td>{@link Inc}</td><td>{@code $inc}</td><td>{@code c = c + ?}</td><td>no</td></tr>
 *   <tr><td>{@link AddToSet}</td><td>{@code $addToSet}</td><td>-</td><td>yes</td></tr>
 *   <tr><td>{@link Push}</td><td>{@code $push}</td><td>-</td><td>no</td></tr>
 *   <tr><td>{@link Pull}</td><td>{@code $pull} (exact match)</td><td>-</td><td>yes</td></tr>
 *   <tr><td>{@link Insert}</td><td>replace with upsert</td><td>{@code REPLACE}</td><td>yes</td></tr>
 *   <tr><td>{@link Delete}</td><td>delete</td><td>{@code DELETE}</td><td>yes</td></tr>
 * </table>
 */
public sealed interface Change permits Change.FieldChange, Change.Insert, Change.Delete {

  /** Whether applying this change twice leaves the document as applying it once does. */
  boolean isIdempotent();

  /** Whether a relational row can take this change: an assignment, an increment, an insert or a delete. */
  boolean isRowChange();

  /** {@code $set}: the field becomes {@code value}. */
  static Set set(String field, Object value) {
    return new Set(field, value);
  }

  /** {@code $unset}: the field is removed. */
  static Unset unset(String field) {
    return new Unset(field);
  }

  /** {@code $inc}: the field grows by {@code amount} (a missing field becomes {@code amount}). */
  static Inc inc(String field, Number amount) {
    return new Inc(field, amount);
  }

  /** {@code $addToSet}: {@code value} is appended to the array field unless already in it. */
  static AddToSet addToSet(String field, Object value) {
    return new AddToSet(field, value);
  }

  /** {@code $push}: {@code value} is appended to the array field. */
  static Push push(String field, Object value) {
    return new Push(field, value);
  }

  /** {@code $pull}: every element equal to {@code value} is removed from the array field. */
  static Pull pull(String field, Object value) {
    return new Pull(field, value);
  }

  /** The document (row) becomes exactly {@code fields}, key excluded, whether or not it existed. */
  static Insert insert(Map<String, ?> fields) {
    return new Insert(FieldValues.checkDocument(fields));
  }

  /** The document (row) is removed. */
  static Delete delete() {
    return new Delete();
  }

  /** A change to one top-level field of an existing document. */
  sealed interface FieldChange extends Change permits Set, Unset, Inc, AddToSet, Push, Pull {

    /** The top-level field this change touches. */
    String field();

    /** The MongoDB update operator this change is, e.g. {@code $inc}. */
    String operator();

    /** The operator's argument: the value, the amount, or {@code ""} for {@code $unset}. */
    Object operand();

    /**
     * Applies this change, with MongoDB's semantics, to the fields of an existing document held in a mutable map.
     *
     * @throws IllegalArgumentException when the field holds a value of the wrong type for this operator, as
     *     MongoDB would refuse the update
     */
    void applyTo(Map<String, Object> fields);
  }

  /**
   * {@code $set}, or a column assignment.
   *
   * @param field the field
   * @param value its new value, see {@link FieldValues}
   */
  record Set(String field, Object value) implements FieldChange {
    /** @throws IllegalArgumentException for an invalid field name or an unsupported value */
    public Set {
      field = FieldValues.checkFieldName(field);
      value = FieldValues.check(value);
    }

    @Override
    public boolean isIdempotent() {
      return true;
    }

    @Override
    public boolean isRowChange() {
      return true;
    }

    @Override
    public String operator() {
      return "$set";
    }

    @Override
    public Object operand() {
      return value;
    }

    @Override
    public void applyTo(Map<String, Object> fields) {
      fields.put(field, value);
    }
  }

  /**
   * {@code $unset}.
   *
   * @param field the field to remove
   */
  record Unset(String field) implements FieldChange {
    /** @throws IllegalArgumentException for an invalid field name */
    public Unset {
      field = FieldValues.checkFieldName(field);
    }

    @Override
    public boolean isIdempotent() {
      return true;
    }

    @Override
    public boolean isRowChange() {
      return false;
    }

    @Override
    public String operator() {
      return "$unset";
    }

    @Override
    public Object operand() {
      return "";
    }

    @Override
    public void applyTo(Map<String, Object> fields) {
      fields.remove(field);
    }
  }

  /**
   * {@code $inc}, or a column increment. Numeric types combine as in MongoDB: Integer overflow widens to Long, a
   * Double makes a Double, a BigDecimal (Decimal128) makes a BigDecimal; Long overflow is refused.
   *
   * @param field the field
   * @param amount an Integer, Long, Double or BigDecimal
   */
  record Inc(String field, Number amount) implements FieldChange {
    /** @throws IllegalArgumentException for an invalid field name or an amount that is not a supported number */
    public Inc {
      field = FieldValues.checkFieldName(field);
      if (!isSupportedNumber(amount)) {
        throw new IllegalArgumentException(
            "$inc amount for '"
                + field
                + "' must be an Integer, Long, Double or"
                + " BigDecimal, got "
                + (amount == null ? "null" : amount.getClass().getName()));
      }
      FieldValues.check(amount);
    }

    @Override
    public boolean isIdempotent() {
      return false;
    }

    @Override
    public boolean isRowChange() {
      return true;
    }

    @Override
    public String operator() {
      return "$inc";
    }

    @Override
    public Object operand() {
      return amount;
    }

    @Override
    public void applyTo(Map<String, Object> fields) {
      if (!fields.containsKey(field)) {
        fields.put(field, amount);
        return;
      }
      Object current = fields.get(field);
      if (!isSupportedNumber(current)) {
        throw new IllegalArgumentException(
            "cannot $inc field '" + field + "' holding non-numeric value " + current);
      }
      fields.put(field, add((Number) current, amount));
    }

    /**
     * Whether {@code then} may be folded into this increment exactly: Double additions do not associate, so an
     * increment involving a Double is kept apart.
     */
    boolean mergesWith(Inc then) {
      return field.equals(then.field)
          && !(amount instanceof Double)
          && !(then.amount instanceof Double);
    }

    static boolean isSupportedNumber(Object value) {
      return value instanceof Integer
          || value instanceof Long
          || value instanceof Double
          || value instanceof BigDecimal;
    }

    static Number add(Number a, Number b) {
      if (a instanceof BigDecimal || b instanceof BigDecimal) {
        return decimal(a).add(decimal(b));
      }
      if (a instanceof Double || b instanceof Double) {
        return a.doubleValue() + b.doubleValue();
      }
      if (a instanceof Long || b instanceof Long) {
        try {
          return Math.addExact(a.longValue(), b.longValue());
        } catch (ArithmeticException e) {
          throw new IllegalArgumentException("$inc overflows a Long: " + a + " + " + b, e);
        }
      }
      long sum = (long) a.intValue() + b.intValue();
      if (sum == (int) sum) {
        return (int) sum;
      }
      return sum;
    }

    private static BigDecimal decimal(Number n) {
      return n instanceof BigDecimal d
          ? d
          : n instanceof Double
              ? BigDecimal.valueOf(n.doubleValue())
              : BigDecimal.valueOf(n.longValue());
    }
  }

  /**
   * {@code $addToSet}: a missing field becomes a one-element array.
   *
   * @param field the array field
   * @param value the element
   */
  record AddToSet(String field, Object value) implements FieldChange {
    /** @throws IllegalArgumentException for an invalid field name or an unsupported value */
    public AddToSet {
      field = FieldValues.checkFieldName(field);
      value = FieldValues.check(value);
    }

    @Override
    public boolean isIdempotent() {
      return true;
    }

    @Override
    public boolean isRowChange() {
      return false;
    }

    @Override
    public String operator() {
      return "$addToSet";
    }

    @Override
    public Object operand() {
      return value;
    }

    @Override
    public void applyTo(Map<String, Object> fields) {
      List<Object> array = ArrayField.copyOf(fields, field, operator());
      if (!array.contains(value)) {
        array.add(value);
      }
      fields.put(field, Collections.unmodifiableList(array));
    }
  }

  /**
   * {@code $push}: a missing field becomes a one-element array.
   *
   * @param field the array field
   * @param value the element
   */
  record Push(String field, Object value) implements FieldChange {
    /** @throws IllegalArgumentException for an invalid field name or an unsupported value */
    public Push {
      field = FieldValues.checkFieldName(field);
      value = FieldValues.check(value);
    }

    @Override
    public boolean isIdempotent() {
      return false;
    }

    @Override
    public boolean isRowChange() {
      return false;
    }

    @Override
    public String operator() {
      return "$push";
    }

    @Override
    public Object operand() {
      return value;
    }

    @Override
    public void applyTo(Map<String, Object> fields) {
      List<Object> array = ArrayField.copyOf(fields, field, operator());
      array.add(value);
      fields.put(field, Collections.unmodifiableList(array));
    }
  }

  /**
   * {@code $pull} of one value, matched by equality (MongoDB's {@code $pullAll} with one element, so that a
   * document value is matched exactly rather than used as a query); a missing field stays missing.
   *
   * @param field the array field
   * @param value the element to remove, every occurrence
   */
  record Pull(String field, Object value) implements FieldChange {
    /** @throws IllegalArgumentException for an invalid field name or an unsupported value */
    public Pull {
      field = FieldValues.checkFieldName(field);
      value = FieldValues.check(value);
    }

    @Override
    public boolean isIdempotent() {
      return true;
    }

    @Override
    public boolean isRowChange() {
      return false;
    }

    @Override
    public String operator() {
      return "$pull";
    }

    @Override
    public Object operand() {
      return value;
    }

    @Override
    public void applyTo(Map<String, Object> fields) {
      if (!fields.containsKey(field)) {
        return;
      }
      List<Object> array = ArrayField.copyOf(fields, field, operator());
      array.removeIf(element -> Objects.equals(element, value));
      fields.put(field, Collections.unmodifiableList(array));
    }
  }

  /**
   * The document (row) becomes exactly these fields: an upsert, so applying it again changes nothing.
   *
   * @param fields the document's fields, its key excluded
   */
  record Insert(Map<String, Object> fields) implements Change {
    /** @throws IllegalArgumentException for an invalid field name or an unsupported value */
    public Insert {
      fields = FieldValues.checkDocument(fields);
    }

    @Override
    public boolean isIdempotent() {
      return true;
    }

    @Override
    public boolean isRowChange() {
      return true;
    }
  }

  /** The document (row) is removed; removing an absent one does nothing. */
  record Delete() implements Change {
    @Override
    public boolean isIdempotent() {
      return true;
    }

    @Override
    public boolean isRowChange() {
      return true;
    }
  }
}
