package io.dendrite.core;

import io.dendrite.testsupport.MySqlTestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** The MariaDB table behind the tests: {@code scores(id INT PRIMARY KEY, val BIGINT)}, one connection per thread. */
final class ScoreTable implements AutoCloseable {
  private final MySqlTestDatabase database;
  private final ThreadLocal<Connection> connections;
  private final List<Connection> opened = new CopyOnWriteArrayList<>();

  ScoreTable(MySqlTestDatabase database) {
    this.database = database;
    this.connections = ThreadLocal.withInitial(this::connect);
  }

  @Override
  public void close() throws SQLException {
    for (Connection connection : opened) {
      connection.close();
    }
  }

  /** Creates the table with rows {@code 0..rows-1}, every val 0. */
  ScoreTable create(int rows) throws SQLException {
    try (Statement statement = connection().createStatement()) {
      statement.execute("CREATE TABLE scores (id INT PRIMARY KEY, val BIGINT NOT NULL)");
    }
    try (PreparedStatement insert =
        connection().prepareStatement("INSERT INTO scores VALUES (?, 0)")) {
      for (int id = 0; id < rows; id++) {
        insert.setInt(1, id);
        insert.addBatch();
      }
      insert.executeBatch();
    }
    return this;
  }

  List<ScoreRow> range(int lowerBound, int upperBound) throws SQLException {
    try (PreparedStatement select =
        connection()
            .prepareStatement("SELECT id, val FROM scores WHERE id BETWEEN ? AND ? ORDER BY id")) {
      select.setInt(1, lowerBound);
      select.setInt(2, upperBound);
      List<ScoreRow> rows = new ArrayList<>();
      try (ResultSet result = select.executeQuery()) {
        while (result.next()) {
          rows.add(new ScoreRow(result.getInt(1), result.getLong(2)));
        }
      }
      return rows;
    }
  }

  void set(ScoreRow row) throws SQLException {
    try (PreparedStatement upsert =
        connection()
            .prepareStatement(
                "INSERT INTO scores VALUES (?, ?) ON DUPLICATE KEY UPDATE val = VALUES(val)")) {
      upsert.setInt(1, row.id());
      upsert.setLong(2, row.val());
      upsert.executeUpdate();
    }
  }

  void remove(int id) throws SQLException {
    try (PreparedStatement delete =
        connection().prepareStatement("DELETE FROM scores WHERE id = ?")) {
      delete.setInt(1, id);
      delete.executeUpdate();
    }
  }

  /** Write-through's cache update for {@link #set}: the row replaces its old version, if in the entry. */
  static CacheUpdate<Integer, ScoreRow> putting(ScoreRow row) {
    return (interval, cached) -> {
      List<ScoreRow> after = new ArrayList<>(cached);
      after.removeIf(old -> old.id() == row.id());
      after.add(row);
      return after;
    };
  }

  /**
   * A set of a row as a write-back Dendrite's command: handed to the write buffer (never applied here), the row
   * replacing its old version in the cached entries.
   */
  static final WriteCommand<Integer, ScoreRow, ScoreRow> BUFFERED_SET =
      new WriteCommand<>() {
        @Override
        public Class<ScoreRow> type() {
          return ScoreRow.class;
        }

        @Override
        public byte[] encode(ScoreRow row) {
          return (row.id() + ":" + row.val()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }

        @Override
        public ScoreRow decode(byte[] bytes) {
          String[] parts = new String(bytes, java.nio.charset.StandardCharsets.UTF_8).split(":");
          return new ScoreRow(Integer.parseInt(parts[0]), Long.parseLong(parts[1]));
        }

        @Override
        public void apply(ScoreRow row) {
          throw new UnsupportedOperationException("a buffered set goes to the write buffer");
        }

        @Override
        public CacheUpdate<Integer, ScoreRow> cacheUpdate(ScoreRow row) {
          return putting(row);
        }
      };

  /** {@link #set}'s changes kept as change records in the cached entries: the row replaces its old version. */
  static final ChangeRecords<Integer, ScoreRow, ScoreRow> SET_RECORDS =
      new ChangeRecords<>() {
        @Override
        public Class<ScoreRow> changeType() {
          return ScoreRow.class;
        }

        @Override
        public byte[] encode(ScoreRow row) {
          return ScoreRow.CODEC.encode(row);
        }

        @Override
        public ScoreRow decode(byte[] record) {
          return ScoreRow.CODEC.decode(record);
        }

        @Override
        public List<ScoreRow> apply(
            Interval<Integer> entryInterval, List<ScoreRow> cachedRows, ScoreRow row) {
          return putting(row).apply(entryInterval, cachedRows);
        }
      };

  /** Write-through's cache update for {@link #remove}. */
  static CacheUpdate<Integer, ScoreRow> removing(int id) {
    return (interval, cached) -> cached.stream().filter(row -> row.id() != id).toList();
  }

  private Connection connection() {
    return connections.get();
  }

  private Connection connect() {
    try {
      Connection connection = database.connect();
      opened.add(connection);
      return connection;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot connect to " + database.name(), e);
    }
  }
}
