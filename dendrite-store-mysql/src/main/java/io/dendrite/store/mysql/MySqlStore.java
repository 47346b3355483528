package io.dendrite.store.mysql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dendrite.core.DataStoreException;
import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.FenceToken;
import io.dendrite.core.SqlFence;
import io.dendrite.core.StoreFence;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import io.dendrite.writeback.store.RangeBounds;
import io.dendrite.writeback.store.SessionStore;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * A {@link DataStore} over MySQL or MariaDB through JDBC (mysql-connector-j) and a HikariCP pool. A table's key
 * is its single-column primary key, found from the database's metadata. A batch is one transaction: rows'
 * {@link ChangeSequence#steps() steps} are applied round by round (every row's first step, then every second
 * step ...), each round as one JDBC batch per statement shape, so rows keep their order and the driver sends
 * few round trips ({@code rewriteBatchedStatements}, or MariaDB's bulk protocol: see {@link #open}). Repeated
 * changes of one row reach it already compacted ({@link ChangeSequence#compact()}: a buffered write holds one
 * compacted sequence per row), so a row takes one statement per step however often it was written.
 *
 * <p>As a {@link SessionStore} it applies a session's changes exactly once through the {@code
 * dendrite_applied_sessions} table ({@link #applyOnce}), which makes non-idempotent changes safe to retry without
 * converting them; {@link #forgetAppliedSessionsBefore} compacts that table.
 */
public final class MySqlStore implements SessionStore, StoreFence {
  private final DataSource pool;

  /** Closes the pool this store opened; does nothing for an application's own {@link #over} data source. */
  private final Runnable closePool;

  private final Map<String, String> keyColumns = new ConcurrentHashMap<>();
  private final AppliedSessions appliedSessions = new AppliedSessions();

  /** The ranges' fences ({@code dendrite_fences}) in this database. */
  private final SqlFence fences;

  private volatile boolean fenceTableExists;

  private MySqlStore(DataSource pool, Runnable closePool) {
    this.pool = pool;
    this.closePool = closePool;
    this.fences = SqlFence.of(pool);
  }

  /**
   * Opens a pool to the database of {@code jdbcUrl}. No connection is made until one is needed, so a store can be
   * opened while the database is down.
   *
   * <p>The URL's scheme picks the driver and how a drain's batches travel:
   *
   * <ul>
   *   <li>{@code jdbc:mysql:} (MySQL Connector/J, for MySQL or MariaDB): a batch of one statement shape is sent
   *       as one multi-statement text query ({@code rewriteBatchedStatements}); the driver escapes every value
   *       into the text and the server parses every statement.
   *   <li>{@code jdbc:mariadb:} (MariaDB Connector/J, for a MariaDB server; the driver must be on the class
   *       path): a batch is sent with MariaDB's bulk protocol ({@code COM_STMT_BULK_EXECUTE}): one server-side
   *       prepared statement and every row's values in binary, one round trip. Measured on a drain of 1 KB rows
   *       this roughly halves both the client's and the server's CPU per row (see {@code docs/benchmarks.md},
   *       "Drain statements").
   * </ul>
   *
   * @param jdbcUrl a {@code jdbc:mysql:} or {@code jdbc:mariadb:} URL, credentials included
   * @param maxPoolSize the most connections held at once
   * @param timeout how long an operation waits for a connection, and then for each reply of the database,
   *     before failing with {@link DataStoreUnavailableException} (at least 250 ms, HikariCP's minimum). The
   *     reply limit is what ends a call into a network that silently drops packets; without it the call (and the
   *     lease its caller holds) would wait for the operating system's TCP timeout, many minutes.
   * @throws IllegalArgumentException for a URL of another scheme
   */
  public static MySqlStore open(String jdbcUrl, int maxPoolSize, Duration timeout) {
    Map<String, String> driverProperties = driverProperties(jdbcUrl, timeout);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(maxPoolSize);
    config.setConnectionTimeout(timeout.toMillis());
    // Checking a pooled connection before handing it out waits 5 s by default, past the timeout
    // promised here.
    config.setValidationTimeout(timeout.toMillis());
    config.setInitializationFailTimeout(-1);
    config.setPoolName("dendrite-mysql-store");
    driverProperties.forEach(config::addDataSourceProperty);
    HikariDataSource pool = new HikariDataSource(config);
    return new MySqlStore(pool, pool::close);
  }

  /**
   * A store over an application's own pool (a Spring Boot {@code DataSource}, say), which stays the application's to
   * close: {@link #close()} leaves it open. The pool's settings are the application's too, so give its connections a
   * socket timeout ({@code socketTimeout} of MySQL Connector/J, MariaDB Connector/J alike): without one, a statement
   * sent into a network that drops packets waits for the operating system's TCP timeout, holding its lease.
   */
  public static MySqlStore over(DataSource pool) {
    return new MySqlStore(Objects.requireNonNull(pool, "pool"), () -> {});
  }

  private static Map<String, String> driverProperties(String jdbcUrl, Duration timeout) {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("connectTimeout", String.valueOf(timeout.toMillis()));
    properties.put("socketTimeout", String.valueOf(timeout.toMillis()));
    properties.put("cachePrepStmts", "true");
    properties.put("prepStmtCacheSize", "256");
    if (jdbcUrl != null && jdbcUrl.startsWith("jdbc:mariadb:")) {
      // Bulk batches need the statement prepared on the server; reads then travel in binary too.
      properties.put("useServerPrepStmts", "true");
      // Off by default since MariaDB Connector/J 3.2 only because bulk batches report
      // SUCCESS_NO_INFO instead of per-row update counts, which the store never reads.
      properties.put("useBulkStmts", "true");
      return properties;
    }
    if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:mysql:")) {
      throw new IllegalArgumentException(
          "a MySQL store needs a jdbc:mysql: (MySQL Connector/J) or jdbc:mariadb:"
              + " (MariaDB Connector/J) URL, got "
              + (jdbcUrl == null ? null : jdbcUrl.replaceAll("\\?.*", "?...")));
    }
    properties.put("rewriteBatchedStatements", "true");
    // Without these the driver sends SET autocommit and COMMIT round trips even when nothing
    // changed, and parses every statement again: a drain applies many small transactions of a few
    // statement shapes.
    properties.put("useLocalSessionState", "true");
    properties.put("useLocalTransactionState", "true");
    properties.put("prepStmtCacheSqlLimit", "4096");
    return properties;
  }

  @Override
  public void apply(List<EntityChanges> batch) {
    List<List<RowStatement>> rounds = rounds(batch);
    inTransaction(
        "apply changes",
        connection -> {
          execute(connection, rounds);
          return null;
        });
  }

  /**
   * Applies the batch in one transaction that commits only while {@code owner}'s fence (a row of {@value
   * SqlFence#TABLE}) is not above its epoch, checked last before the commit ({@link SqlFence#check}).
   *
   * @throws io.dendrite.core.StoreFencedOutException when a later owner raised the fence (nothing applied)
   */
  @Override
  public void apply(List<EntityChanges> batch, FenceToken owner) {
    List<List<RowStatement>> rounds = rounds(batch);
    ensureFenceTable();
    inTransaction(
        "apply changes",
        connection -> {
          execute(connection, rounds);
          SqlFence.check(connection, owner);
          return null;
        });
  }

  /**
   * Raises the range's fence row to its epoch, waiting for the fenced transactions that passed their check to end.
   */
  @Override
  public void raise(StoreFence.Range range) {
    ensureFenceTable();
    inTransaction(
        "raise " + range.fence() + " to " + range.epoch(),
        connection -> {
          fences.raise(connection, range.fence(), range.epoch());
          return null;
        });
  }

  /** The database's connections and fences, for {@link io.dendrite.core.SqlWriteCommand}s on the same pool. */
  public SqlFence fences() {
    return fences;
  }

  @Override
  public boolean applyOnce(String sessionId, List<EntityChanges> batch) {
    AppliedSessions.checkSessionId(sessionId);
    List<List<RowStatement>> rounds = rounds(batch);
    ensureAppliedSessionsTable();
    return inTransaction(
        "apply session " + sessionId,
        connection -> {
          if (!appliedSessions.claim(connection, sessionId, Instant.now())) {
            return false;
          }
          execute(connection, rounds);
          return true;
        });
  }

  /**
   * Deletes the records of sessions applied before {@code cutoff}. Call it only with a cutoff older than any
   * session that may still be applied again (one still buffered in the cache), or that session would apply twice.
   *
   * @return how many records were deleted
   */
  public int forgetAppliedSessionsBefore(Instant cutoff) {
    ensureAppliedSessionsTable();
    return inTransaction(
        "forget applied sessions", connection -> appliedSessions.forgetBefore(connection, cutoff));
  }

  @Override
  public List<String> appliedSessionIds(Instant appliedBefore, String afterId, int limit) {
    ensureAppliedSessionsTable();
    return inTransaction(
        "list applied sessions",
        connection -> appliedSessions.idsBefore(connection, appliedBefore, afterId, limit));
  }

  @Override
  public int forgetAppliedSessions(Collection<String> sessionIds) {
    if (sessionIds.isEmpty()) {
      return 0;
    }
    ensureAppliedSessionsTable();
    return inTransaction(
        "forget applied sessions", connection -> appliedSessions.forget(connection, sessionIds));
  }

  /**
   * {@inheritDoc} Here: every table exists with a single-column primary key (looked up once per table, then
   * remembered), every change is one a row can take, and every name is a plain identifier.
   */
  @Override
  public void checkAppliable(List<EntityChanges> batch) {
    rounds(batch);
  }

  @Override
  public Optional<Entity> read(EntityKey key) {
    return inTransaction(
        "read " + key,
        connection -> {
          String keyColumn = keyColumn(connection, key.collection());
          List<Entity> found =
              query(
                  connection,
                  key.collection(),
                  keyColumn,
                  "SELECT * FROM "
                      + RowStatement.quote(key.collection())
                      + " WHERE "
                      + RowStatement.quote(keyColumn)
                      + " = ?",
                  key.id());
          return found.stream().findFirst();
        });
  }

  @Override
  public List<Entity> readRange(
      String collection, String field, Object lowerBound, Object upperBound) {
    RangeBounds.check(collection, field, lowerBound, upperBound);
    String column = RowStatement.quote(field);
    return inTransaction(
        "read a range of " + collection,
        connection -> {
          String keyColumn = keyColumn(connection, collection);
          return query(
              connection,
              collection,
              keyColumn,
              "SELECT * FROM "
                  + RowStatement.quote(collection)
                  + " WHERE "
                  + column
                  + " BETWEEN ? AND ? ORDER BY "
                  + column
                  + ", "
                  + RowStatement.quote(keyColumn),
              lowerBound,
              upperBound);
        });
  }

  @Override
  public void close() {
    closePool.run();
  }

  /** Builds every statement before any change is sent (only key metadata is read), so bad input changes nothing. */
  private List<List<RowStatement>> rounds(List<EntityChanges> batch) {
    List<List<RowStatement>> rounds = new ArrayList<>();
    for (EntityChanges entity : batch) {
      String table = entity.key().collection();
      String known = keyColumns.get(table);
      // A pooled connection and a transaction only the first time a table is seen.
      String keyColumn =
          known != null
              ? known
              : inTransaction(
                  "read the primary key of " + table, connection -> keyColumn(connection, table));
      List<ChangeSequence> steps = entity.changes().steps();
      for (int i = 0; i < steps.size(); i++) {
        if (rounds.size() == i) {
          rounds.add(new ArrayList<>());
        }
        rounds.get(i).add(RowStatement.of(entity.key(), keyColumn, steps.get(i)));
      }
    }
    return rounds;
  }

  private static void execute(Connection connection, List<List<RowStatement>> rounds)
      throws SQLException {
    for (List<RowStatement> round : rounds) {
      Map<String, List<List<Object>>> parametersBySql = new LinkedHashMap<>();
      round.forEach(
          statement ->
              parametersBySql
                  .computeIfAbsent(statement.sql(), sql -> new ArrayList<>())
                  .add(statement.parameters()));
      for (Map.Entry<String, List<List<Object>>> shape : parametersBySql.entrySet()) {
        try (PreparedStatement statement = connection.prepareStatement(shape.getKey())) {
          for (List<Object> parameters : shape.getValue()) {
            bind(statement, parameters.toArray());
            statement.addBatch();
          }
          statement.executeBatch();
        }
      }
    }
  }

  private List<Entity> query(
      Connection connection, String table, String keyColumn, String sql, Object... parameters)
      throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(sql)) {
      bind(statement, parameters);
      try (ResultSet rows = statement.executeQuery()) {
        ResultSetMetaData columns = rows.getMetaData();
        List<Entity> entities = new ArrayList<>();
        while (rows.next()) {
          Map<String, Object> fields = new LinkedHashMap<>();
          Object id = null;
          for (int i = 1; i <= columns.getColumnCount(); i++) {
            String column = columns.getColumnLabel(i);
            if (column.equalsIgnoreCase(keyColumn)) {
              id = rows.getObject(i);
            } else {
              fields.put(column, rows.getObject(i));
            }
          }
          entities.add(new Entity(new EntityKey(table, id), fields));
        }
        return entities;
      }
    }
  }

  private static void bind(PreparedStatement statement, Object... parameters) throws SQLException {
    for (int i = 0; i < parameters.length; i++) {
      Object value = parameters[i];
      if (value instanceof List || value instanceof Map) {
        throw new IllegalArgumentException("a column cannot hold an array or a document: " + value);
      }
      statement.setObject(
          i + 1, value instanceof Instant instant ? Timestamp.from(instant) : value);
    }
  }

  private String keyColumn(Connection connection, String table) throws SQLException {
    String known = keyColumns.get(table);
    if (known != null) {
      return known;
    }
    List<String> columns = new ArrayList<>();
    DatabaseMetaData metadata = connection.getMetaData();
    try (ResultSet keys = metadata.getPrimaryKeys(connection.getCatalog(), null, table)) {
      while (keys.next()) {
        columns.add(keys.getString("COLUMN_NAME"));
      }
    }
    if (columns.size() != 1) {
      throw new IllegalArgumentException(
          "table "
              + table
              + " must exist and have a single-column primary key,"
              + " found key columns "
              + columns);
    }
    keyColumns.put(table, columns.get(0));
    return columns.get(0);
  }

  private void ensureFenceTable() {
    if (fenceTableExists) {
      return;
    }
    inTransaction(
        "create " + SqlFence.TABLE,
        connection -> {
          fences.ensureTable(connection);
          return null;
        });
    fenceTableExists = true;
  }

  private void ensureAppliedSessionsTable() {
    inTransaction(
        "create " + AppliedSessions.TABLE,
        connection -> {
          appliedSessions.ensureTable(connection);
          return null;
        });
  }

  /** The unit of work {@link #inTransaction} runs. */
  private interface SqlWork<T> {
    T run(Connection connection) throws SQLException;
  }

  private <T> T inTransaction(String what, SqlWork<T> work) {
    Connection pooled;
    try {
      pooled = pool.getConnection();
    } catch (SQLException e) {
      throw translate(what, e, true); // no connection: nothing of the work was sent
    }
    try (Connection connection = pooled) {
      connection.setAutoCommit(false);
      try {
        T result = work.run(connection);
        connection.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        try {
          connection.rollback();
        } catch (SQLException rollbackFailure) {
          e.addSuppressed(rollbackFailure);
        }
        throw e;
      }
    } catch (SQLException e) {
      throw translate(what, e, false);
    }
  }

  private static DataStoreException translate(String what, SQLException e, boolean notSent) {
    boolean unreachable = connectionLost(e, 0);
    String message =
        "MySQL "
            + (unreachable ? "unavailable; could not " : "failed to ")
            + what
            + ": "
            + e.getMessage();
    return unreachable
        ? new DataStoreUnavailableException(message, e, notSent)
        : new DataStoreException(message, e);
  }

  /**
   * Whether {@code failure}, its causes or what was suppressed with it (the rollback's failure) say the connection
   * was lost. Connector/J, for one, reports a batch whose connection timed out as "No operations allowed after
   * statement closed", and only the rollback after it names the lost link.
   */
  private static boolean connectionLost(Throwable failure, int depth) {
    if (failure == null || depth > 8) {
      return false;
    }
    if (failure instanceof SQLTransientConnectionException
        || failure instanceof SQLNonTransientConnectionException
        || failure instanceof SQLRecoverableException
        || (failure instanceof SQLException sql
            && sql.getSQLState() != null
            && sql.getSQLState().startsWith("08"))) {
      return true;
    }
    for (Throwable suppressed : failure.getSuppressed()) {
      if (connectionLost(suppressed, depth + 1)) {
        return true;
      }
    }
    return connectionLost(failure.getCause(), depth + 1);
  }
}
