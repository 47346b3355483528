package io.dendrite.store.mysql;

import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.Change.FieldChange;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One {@link ChangeSequence#steps() step} of a row's changes as a parameterised SQL statement. Statements of the
 * same shape share their text, which is what lets {@link MySqlStore} batch them. An increment treats a NULL
 * column as 0, as {@code $inc} treats a missing field, where plain SQL would silently leave NULL and lose the
 * count.
 *
 * @param sql the statement text, identifiers quoted
 * @param parameters its parameter values, in order
 */
record RowStatement(String sql, List<Object> parameters) {
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z0-9_$]{1,64}");

  /**
   * @throws IllegalArgumentException for a change a row cannot take, a change to the key column, or a table or
   *     column name that is not a plain MySQL identifier
   */
  static RowStatement of(EntityKey key, String keyColumn, ChangeSequence step) {
    String table = quote(key.collection());
    Change first = step.changes().get(0);
    List<Object> parameters = new ArrayList<>();
    if (first instanceof Change.Insert insert) {
      StringBuilder columns = new StringBuilder(quote(keyColumn));
      StringBuilder values = new StringBuilder("?");
      parameters.add(key.id());
      for (Map.Entry<String, Object> field : insert.fields().entrySet()) {
        columns.append(", ").append(quote(notKey(field.getKey(), keyColumn, key)));
        values.append(", ?");
        parameters.add(field.getValue());
      }
      // REPLACE, not INSERT ... ON DUPLICATE KEY UPDATE: an insert makes the row exactly these
      // columns.
      return new RowStatement(
          "REPLACE INTO " + table + " (" + columns + ") VALUES (" + values + ")", parameters);
    }
    if (first instanceof Change.Delete) {
      return new RowStatement(
          "DELETE FROM " + table + " WHERE " + quote(keyColumn) + " = ?", List.of(key.id()));
    }
    StringBuilder assignments = new StringBuilder();
    for (Change change : step.changes()) {
      if (!change.isRowChange()) {
        throw new IllegalArgumentException(
            change
                + " is not a row change; rows take assignments ($set),"
                + " increments ($inc), inserts and deletes");
      }
      FieldChange fieldChange = (FieldChange) change;
      String column = quote(notKey(fieldChange.field(), keyColumn, key));
      assignments
          .append(assignments.length() == 0 ? "" : ", ")
          .append(column)
          .append(" = ")
          .append(change instanceof Change.Inc ? "COALESCE(" + column + ", 0) + ?" : "?");
      parameters.add(fieldChange.operand());
    }
    parameters.add(key.id());
    return new RowStatement(
        "UPDATE " + table + " SET " + assignments + " WHERE " + quote(keyColumn) + " = ?",
        parameters);
  }

  static String quote(String identifier) {
    if (identifier == null || !IDENTIFIER.matcher(identifier).matches()) {
      throw new IllegalArgumentException(
          "not a plain MySQL identifier (letters, digits, _ and $, at most 64): " + identifier);
    }
    return "`" + identifier + "`";
  }

  private static String notKey(String column, String keyColumn, EntityKey key) {
    if (column.equalsIgnoreCase(keyColumn)) {
      throw new IllegalArgumentException(
          "changes to " + key + " must not touch its primary key column " + keyColumn);
    }
    return column;
  }
}
