package io.dendrite.spring.boot;

import io.dendrite.core.CacheUpdate;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.RangeQuery;
import io.dendrite.core.RowCodec;
import io.dendrite.core.WriteCommand;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.document.DocumentCommand;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/** The tests' table, {@code scores (id INT PRIMARY KEY, points BIGINT)}, and Dendrites over it as an application binds them. */
final class ScoresTable {
  /** A row. */
  record Score(int id, long points) {}

  static final RowCodec<Integer, Score> ROWS = RowCodec.ofRecord(Score.class, Score::id, Score::id);

  private ScoresTable() {}

  /** Creates the table with ids 1..{@code rows}, 0 points each. */
  static void create(DataSource db, int rows) throws SQLException {
    try (Connection connection = db.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE scores (id INT PRIMARY KEY, points BIGINT NOT NULL)");
      for (int id = 1; id <= rows; id++) {
        statement.execute("INSERT INTO scores VALUES (" + id + ", 0)");
      }
    }
  }

  static List<Score> select(DataSource db, int lb, int ub) throws SQLException {
    try (Connection connection = db.getConnection();
        PreparedStatement select =
            connection.prepareStatement(
                "SELECT id, points FROM scores WHERE id BETWEEN ? AND ? ORDER BY id")) {
      select.setInt(1, lb);
      select.setInt(2, ub);
      List<Score> found = new ArrayList<>();
      try (ResultSet rows = select.executeQuery()) {
        while (rows.next()) {
          found.add(new Score(rows.getInt(1), rows.getLong(2)));
        }
      }
      return found;
    }
  }

  /** Write-around or write-through: the command updates the row itself. */
  static Dendrite<Integer, Score> writingThrough(Dendrites dendrites, DataSource db) {
    return dendrites.build(
        DomainType.INTEGER,
        ROWS,
        builder ->
            bound(builder, (lb, ub) -> select(db, lb, ub))
                .command("set", WriteCommand.putting(Score.class, ROWS, s -> update(db, s))));
  }

  /** Write-back: the command is the row's change, which write-back buffers and drains. */
  static Dendrite<Integer, Score> writingBack(Dendrites dendrites, DataSource db) {
    return changingRows(dendrites, (lb, ub) -> select(db, lb, ub));
  }

  /**
   * The command is the row's change, which the application's data store applies (write-back drains it, TARDIS
   * applies it or buffers it while the store fails), whichever database it is; {@code query} reads the rows.
   */
  static Dendrite<Integer, Score> changingRows(
      Dendrites dendrites, RangeQuery<Integer, Score> query) {
    return dendrites.build(
        DomainType.INTEGER,
        ROWS,
        builder ->
            bound(builder, query)
                .command(
                    "set",
                    DocumentCommand.of(
                        Score.class,
                        s ->
                            new EntityChanges(
                                new EntityKey("scores", s.id()),
                                ChangeSequence.of(Change.set("points", s.points()))),
                        s -> CacheUpdate.putting(ROWS, s))));
  }

  private static Dendrite.Builder<Integer, Score> bound(
      Dendrite.Builder<Integer, Score> builder, RangeQuery<Integer, Score> query) {
    return builder.collection("scores").domain("id").range(1, 1_000).query("byId", query);
  }

  private static void update(DataSource db, Score score) throws SQLException {
    try (Connection connection = db.getConnection();
        PreparedStatement update =
            connection.prepareStatement("UPDATE scores SET points = ? WHERE id = ?")) {
      update.setLong(1, score.points());
      update.setInt(2, score.id());
      update.executeUpdate();
    }
  }
}
