package io.dendrite.coordination;

import io.dendrite.core.CacheUpdate;
import io.dendrite.core.ChangeRecords;
import io.dendrite.core.Interval;
import io.dendrite.core.RowCodec;
import io.dendrite.core.WriteCommand;
import io.dendrite.testsupport.MySqlTestDatabase;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The MariaDB table behind the multi-process tests, {@code scores(id INT PRIMARY KEY, val BIGINT, cnt BIGINT)}, one
 * connection per thread, with its rows' codec and its two kinds of write as {@link WriteCommand}s: {@link #set} (an
 * upsert of {@code val}) and {@link #remove}. Write-back's kinds are {@link BufferedScores}'.
 */
final class Scores implements AutoCloseable {
  /** A row: {@code id} is the range attribute, {@code val} what writes set, {@code cnt} what they increment. */
  record Score(int id, long val, long cnt) {}

  /** A write of {@code val} to row {@code id}, inserting it (with {@code cnt} 0) if absent. */
  record SetVal(int id, long val) {}

  static final RowCodec<Integer, Score> CODEC =
      new RowCodec<>() {
        @Override
        public Integer attributeOf(Score row) {
          return row.id();
        }

        @Override
        public Object identityOf(Score row) {
          return row.id();
        }

        @Override
        public byte[] encode(Score row) {
          return ByteBuffer.allocate(20)
              .putInt(row.id())
              .putLong(row.val())
              .putLong(row.cnt())
              .array();
        }

        @Override
        public Score decode(byte[] bytes) {
          ByteBuffer buffer = ByteBuffer.wrap(bytes);
          return new Score(buffer.getInt(), buffer.getLong(), buffer.getLong());
        }
      };

  private final MySqlTestDatabase database;
  private final ThreadLocal<Connection> connections = ThreadLocal.withInitial(this::connect);
  private final List<Connection> opened = new CopyOnWriteArrayList<>();

  Scores(MySqlTestDatabase database) {
    this.database = database;
  }

  /** The upsert of a row's {@code val}; cached results take the new value (its count unchanged). */
  WriteCommand<Integer, Score, SetVal> set() {
    return new WriteCommand<>() {
      @Override
      public Class<SetVal> type() {
        return SetVal.class;
      }

      @Override
      public byte[] encode(SetVal write) {
        return encodeSet(write);
      }

      @Override
      public SetVal decode(byte[] bytes) {
        return decodeSet(bytes);
      }

      @Override
      public void apply(SetVal write) throws SQLException {
        try (PreparedStatement upsert =
            connections
                .get()
                .prepareStatement(
                    "INSERT INTO scores VALUES (?, ?, 0) ON DUPLICATE KEY UPDATE val = VALUES(val)")) {
          upsert.setInt(1, write.id());
          upsert.setLong(2, write.val());
          upsert.executeUpdate();
        }
      }

      @Override
      public CacheUpdate<Integer, Score> cacheUpdate(SetVal write) {
        return setting(write.id(), write.val());
      }
    };
  }

  /**
   * Sets kept in cached results as change records: with them, a range owner's write keeps the results its near
   * cache holds there alone and deletes their copies in the cache servers, which the failover checks then cover.
   */
  static final ChangeRecords<Integer, Score, SetVal> SET_RECORDS =
      new ChangeRecords<>() {
        @Override
        public Class<SetVal> changeType() {
          return SetVal.class;
        }

        @Override
        public byte[] encode(SetVal change) {
          return encodeSet(change);
        }

        @Override
        public SetVal decode(byte[] record) {
          return decodeSet(record);
        }

        @Override
        public List<Score> apply(
            Interval<Integer> entryInterval, List<Score> cachedRows, SetVal change) {
          return setting(change.id(), change.val()).apply(entryInterval, cachedRows);
        }
      };

  /** A set's 12 bytes: the row's id, then its new val. */
  static byte[] encodeSet(SetVal write) {
    return ByteBuffer.allocate(12).putInt(write.id()).putLong(write.val()).array();
  }

  static SetVal decodeSet(byte[] bytes) {
    if (bytes.length != 12) {
      throw new IllegalArgumentException("a set is 12 bytes, got " + bytes.length);
    }
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    return new SetVal(buffer.getInt(), buffer.getLong());
  }

  /** A cached result after row {@code id}'s val became {@code val}. */
  static CacheUpdate<Integer, Score> setting(int id, long val) {
    return (interval, cached) -> {
      List<Score> after = new ArrayList<>(cached);
      long cnt =
          cached.stream().filter(row -> row.id() == id).mapToLong(Score::cnt).findFirst().orElse(0);
      after.removeIf(old -> old.id() == id);
      after.add(new Score(id, val, cnt));
      return after;
    };
  }

  /** The delete of a row by id. */
  WriteCommand<Integer, Score, Integer> remove() {
    return new WriteCommand<>() {
      @Override
      public Class<Integer> type() {
        return Integer.class;
      }

      @Override
      public byte[] encode(Integer id) {
        return ByteBuffer.allocate(4).putInt(id).array();
      }

      @Override
      public Integer decode(byte[] bytes) {
        if (bytes.length != 4) {
          throw new IllegalArgumentException("an id is 4 bytes, got " + bytes.length);
        }
        return ByteBuffer.wrap(bytes).getInt();
      }

      @Override
      public void apply(Integer id) throws SQLException {
        try (PreparedStatement delete =
            connections.get().prepareStatement("DELETE FROM scores WHERE id = ?")) {
          delete.setInt(1, id);
          delete.executeUpdate();
        }
      }

      @Override
      public CacheUpdate<Integer, Score> cacheUpdate(Integer id) {
        return (interval, cached) -> cached.stream().filter(row -> row.id() != id).toList();
      }
    };
  }

  /** Creates the table with rows {@code 0..rows-1}, every val 0. */
  Scores create(int rows) throws SQLException {
    try (Statement statement = connections.get().createStatement()) {
      statement.execute(
          "CREATE TABLE scores (id INT PRIMARY KEY, val BIGINT NOT NULL, cnt BIGINT NOT NULL)");
    }
    try (PreparedStatement insert =
        connections.get().prepareStatement("INSERT INTO scores VALUES (?, 0, 0)")) {
      for (int id = 0; id < rows; id++) {
        insert.setInt(1, id);
        insert.addBatch();
      }
      insert.executeBatch();
    }
    return this;
  }

  List<Score> range(int lowerBound, int upperBound) throws SQLException {
    try (PreparedStatement select =
        connections
            .get()
            .prepareStatement(
                "SELECT id, val, cnt FROM scores WHERE id BETWEEN ? AND ? ORDER BY id")) {
      select.setInt(1, lowerBound);
      select.setInt(2, upperBound);
      List<Score> rows = new ArrayList<>();
      try (ResultSet result = select.executeQuery()) {
        while (result.next()) {
          rows.add(new Score(result.getInt(1), result.getLong(2), result.getLong(3)));
        }
      }
      return rows;
    }
  }

  @Override
  public void close() throws SQLException {
    for (Connection connection : opened) {
      connection.close();
    }
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
