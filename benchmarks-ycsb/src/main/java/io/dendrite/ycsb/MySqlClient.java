package io.dendrite.ycsb;

/**
 * YCSB binding {@code io.dendrite.ycsb.MySqlClient}: MySQL (or MariaDB) alone, through JDBC and a HikariCP pool.
 * Creates the table if it is missing (see {@link RecordTable}). Properties: {@code mysql.url} (default the
 * environment's DENDRITE_MYSQL_URL), {@code db.pool}, and those of {@link InstrumentedDB}.
 */
public final class MySqlClient extends InstrumentedDB {

  @Override
  protected String bindingName() {
    return "mysql";
  }

  @Override
  RecordBackend openBackend(BindingProperties properties, RecordTable table) {
    return new DatabaseBackend(RecordStore.open(RecordStore.Kind.MYSQL, properties, table));
  }
}
