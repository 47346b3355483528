package io.dendrite.ycsb.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;

/**
 * MariaDB's (or MySQL's) own counters from {@code SHOW GLOBAL STATUS}: statements are {@code Questions} (the
 * statements clients sent, each execution of a prepared one included), commits {@code Handler_commit} (the
 * transactions the storage engines committed, which includes each autocommitted statement and read-only
 * transaction) and fsyncs {@code Innodb_data_fsyncs} (InnoDB's fsync() calls).
 */
final class MySqlStatusCounters implements StatusCounters {

  static final String QUERY =
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Handler_commit','Innodb_data_fsyncs')";

  /** A read must not hold up the thread that follows YCSB's output for long when the server is gone. */
  private static final String TIMEOUT_MILLIS = "5000";

  private final String jdbcUrl;

  MySqlStatusCounters(String jdbcUrl) {
    this.jdbcUrl = jdbcUrl;
  }

  @Override
  public Session open() throws SQLException {
    Properties timeouts = new Properties();
    timeouts.setProperty("connectTimeout", TIMEOUT_MILLIS);
    timeouts.setProperty("socketTimeout", TIMEOUT_MILLIS);
    Connection connection = DriverManager.getConnection(jdbcUrl, timeouts);
    return new Session() {
      /** The SHOW statements sent so far: the server counts each in {@code Questions} as it runs it. */
      private long reads;

      @Override
      public StatusCounts read() throws SQLException {
        reads++;
        Map<String, Long> values = new HashMap<>();
        try (Statement s = connection.createStatement();
            ResultSet rows = s.executeQuery(QUERY)) {
          while (rows.next()) {
            values.put(rows.getString(1), Long.parseLong(rows.getString(2)));
          }
        }
        return new StatusCounts(
            OptionalLong.of(value(values, "Questions") - reads),
            OptionalLong.of(value(values, "Handler_commit")),
            OptionalLong.of(value(values, "Innodb_data_fsyncs")));
      }

      @Override
      public void close() {
        try {
          connection.close();
        } catch (SQLException e) {
          // the counters read so far stand; a connection that will not close has nothing more to
          // give
        }
      }
    };
  }

  private static long value(Map<String, Long> values, String name) throws SQLException {
    Long value = values.get(name);
    if (value == null) {
      throw new SQLException("SHOW GLOBAL STATUS gave no " + name);
    }
    return value;
  }
}
