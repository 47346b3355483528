package io.dendrite.ycsb;

import io.dendrite.store.mongodb.MongoStore;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.store.DataStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * YCSB records in MySQL or MongoDB through the write-back module's {@link DataStore}s, the same code write-back
 * drains through, so every binding (and the database-alone baselines) reads and writes the database the same way.
 * Each method is one database call.
 */
final class RecordStore implements AutoCloseable {
  /** {@code mysql.url}: a JDBC URL, credentials included; default the environment's DENDRITE_MYSQL_URL. */
  static final String MYSQL_URL = "mysql.url";

  /** {@code mongodb.url}: a MongoDB connection string; default the environment's DENDRITE_MONGO_URL. */
  static final String MONGODB_URL = "mongodb.url";

  /** {@code mongodb.database}: the database name, default {@code ycsb}. */
  static final String MONGODB_DATABASE = "mongodb.database";

  /** {@code db.pool}: most database connections held at once (MySQL), default 64. */
  static final String POOL = "db.pool";

  /**
   * {@code db.timeoutms}: how long a database call waits (for a pooled connection, or MongoDB's server selection)
   * before it fails; default 10 000, or what the binding opening the store asks for.
   */
  static final String TIMEOUT_MS = "db.timeoutms";

  /** The databases a store can be. */
  enum Kind {
    MYSQL,
    MONGODB
  }

  private final DataStore store;
  private final RecordTable table;

  private RecordStore(DataStore store, RecordTable table) {
    this.store = store;
    this.table = table;
  }

  /** Opens the store, creating the table (MySQL) or the number's index (MongoDB) if missing. */
  static RecordStore open(Kind kind, BindingProperties properties, RecordTable table) {
    return open(kind, properties, table, Duration.ofSeconds(10));
  }

  /** {@link #open(Kind, BindingProperties, RecordTable)} with another default for {@value #TIMEOUT_MS}. */
  static RecordStore open(
      Kind kind, BindingProperties properties, RecordTable table, Duration defaultTimeout) {
    Duration timeout =
        Duration.ofMillis(properties.number(TIMEOUT_MS, defaultTimeout.toMillis(), 1));
    if (kind == Kind.MYSQL) {
      String url = properties.requiredOrEnvironment(MYSQL_URL, "DENDRITE_MYSQL_URL");
      table.createInMySql(url);
      return new RecordStore(MySqlStore.open(url, properties.integer(POOL, 64, 1), timeout), table);
    }
    String url = properties.requiredOrEnvironment(MONGODB_URL, "DENDRITE_MONGO_URL");
    String database = properties.string(MONGODB_DATABASE, "ycsb");
    table.indexInMongo(url, database);
    return new RecordStore(MongoStore.open(url, database, timeout), table);
  }

  RecordTable table() {
    return table;
  }

  /** The underlying store, for a write-back engine that drains into it. */
  DataStore dataStore() {
    return store;
  }

  Optional<YcsbRecord> read(String key) {
    return store.read(table.entityKey(key)).map(table::record);
  }

  List<YcsbRecord> scan(long first, long last) {
    return store.readRange(table.name(), RecordTable.NUMBER, first, last).stream()
        .map(table::record)
        .toList();
  }

  void apply(EntityChanges changes) {
    store.apply(List.of(changes));
  }

  @Override
  public void close() {
    store.close();
  }
}
