package io.dendrite.ycsb;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Indexes;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The one schema every binding reads and writes, so that a database loaded through any of them serves all: the
 * YCSB key as primary key ({@code YCSB_KEY} in MySQL, {@code _id} in MongoDB), the record number in the indexed
 * {@value #NUMBER} attribute that scans range over, and the fields {@code <prefix>0 .. <prefix>(n-1)}.
 * MySQL column names ignore case, so a column {@code FIELD0} is the YCSB field {@code field0}.
 *
 * @param name the table (collection) name
 * @param fieldCount YCSB's {@code fieldcount}
 * @param fieldPrefix YCSB's {@code fieldnameprefix}
 */
record RecordTable(String name, int fieldCount, String fieldPrefix) {
  /** The numeric attribute holding the record number. */
  static final String NUMBER = "ycsb_id";

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,60}");

  RecordTable {
    check("table", name);
    check("fieldnameprefix", fieldPrefix);
    if (fieldCount < 1) {
      throw new IllegalArgumentException("fieldcount must be at least 1, got " + fieldCount);
    }
    if ((fieldPrefix + "0").equalsIgnoreCase(NUMBER)) {
      throw new IllegalArgumentException(
          "fieldnameprefix " + fieldPrefix + " collides with " + NUMBER);
    }
  }

  /** The table the properties describe: {@code dendrite.table} (else YCSB's {@code table}), fieldcount, prefix. */
  static RecordTable from(BindingProperties properties) {
    return new RecordTable(
        properties.string("dendrite.table", properties.string("table", "usertable")),
        properties.integer("fieldcount", 10, 1),
        properties.string("fieldnameprefix", "field"));
  }

  /** The index of field {@code name}, or -1 if it is none of this table's fields. */
  int fieldIndex(String field) {
    if (field.length() <= fieldPrefix.length()
        || !field.regionMatches(true, 0, fieldPrefix, 0, fieldPrefix.length())) {
      return -1;
    }
    try {
      int index = Integer.parseInt(field.substring(fieldPrefix.length()));
      return index >= 0 && index < fieldCount && field.length() == (fieldPrefix + index).length()
          ? index
          : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  String fieldName(int index) {
    return fieldPrefix + index;
  }

  /** The record a store returned; columns that are not YCSB fields (the number) are left out of its fields. */
  YcsbRecord record(Entity entity) {
    Map<String, String> fields = new LinkedHashMap<>();
    Object number = null;
    for (Map.Entry<String, Object> column : entity.fields().entrySet()) {
      if (column.getKey().equalsIgnoreCase(NUMBER)) {
        number = column.getValue();
        continue;
      }
      int index = fieldIndex(column.getKey());
      if (index >= 0 && column.getValue() != null) {
        fields.put(fieldName(index), column.getValue().toString());
      }
    }
    String key = entity.key().id().toString();
    return new YcsbRecord(
        key, number instanceof Number n ? n.longValue() : RecordKey.number(key), fields);
  }

  EntityKey entityKey(String key) {
    return new EntityKey(name, key);
  }

  /** An insert: the row becomes exactly the number and these fields. */
  EntityChanges insert(YcsbRecord record) {
    Map<String, Object> fields = new LinkedHashMap<>(checkFields(record.fields()));
    fields.put(NUMBER, record.number());
    return new EntityChanges(entityKey(record.key()), ChangeSequence.of(Change.insert(fields)));
  }

  /** An update: one {@code $set} (SQL assignment) per field. */
  EntityChanges update(String key, Map<String, String> values) {
    List<Change> sets = new ArrayList<>();
    checkFields(values).forEach((field, value) -> sets.add(Change.set(field, value)));
    return new EntityChanges(entityKey(key), new ChangeSequence(sets));
  }

  EntityChanges delete(String key) {
    return new EntityChanges(entityKey(key), ChangeSequence.of(Change.delete()));
  }

  /** Creates the MySQL table if it is missing (idempotent, safe while another process does the same). */
  void createInMySql(String jdbcUrl) {
    StringBuilder ddl =
        new StringBuilder(
            "CREATE TABLE IF NOT EXISTS `"
                + name
                + "` (YCSB_KEY VARCHAR(255) NOT NULL"
                + " PRIMARY KEY, `"
                + NUMBER
                + "` BIGINT NOT NULL");
    for (int i = 0; i < fieldCount; i++) {
      ddl.append(", `").append(fieldName(i).toUpperCase(Locale.ROOT)).append("` TEXT");
    }
    ddl.append(", INDEX `").append(NUMBER).append("_index` (`").append(NUMBER).append("`))");
    try (Connection connection = DriverManager.getConnection(jdbcUrl);
        Statement statement = connection.createStatement()) {
      statement.execute(ddl.toString());
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not create table " + name + " in MySQL: " + e.getMessage(), e);
    }
  }

  /** Creates the index on the number if it is missing (MongoDB creates the collection with it). */
  void indexInMongo(String connectionString, String database) {
    try (MongoClient client = MongoClients.create(connectionString)) {
      client.getDatabase(database).getCollection(name).createIndex(Indexes.ascending(NUMBER));
    }
  }

  private Map<String, String> checkFields(Map<String, String> values) {
    for (String field : values.keySet()) {
      if (fieldIndex(field) < 0 || !field.equals(fieldName(fieldIndex(field)))) {
        throw new IllegalArgumentException(
            "field "
                + field
                + " is not one of "
                + fieldPrefix
                + "0.."
                + fieldPrefix
                + (fieldCount - 1)
                + " (check fieldcount and fieldnameprefix)");
      }
    }
    return values;
  }

  private static void check(String what, String identifier) {
    if (identifier == null || !IDENTIFIER.matcher(identifier).matches()) {
      throw new IllegalArgumentException(
          what + " must be a plain identifier (letters, digits, _), got " + identifier);
    }
  }
}
