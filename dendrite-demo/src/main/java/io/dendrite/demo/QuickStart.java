package io.dendrite.demo;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.RowCodec;
import io.dendrite.core.WriteCommand;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** Caches `SELECT ... WHERE id BETWEEN ? AND ?` on a MySQL/MariaDB table, writing through to it. */
public final class QuickStart {
  /** A row of {@code CREATE TABLE scores (id INT PRIMARY KEY, points BIGINT NOT NULL)}. */
  public record Score(int id, long points) {}

  /** {@code args}: a JDBC URL (with user and password) and the IQ servers, e.g. {@code 127.0.0.1:11211}. */
  public static void main(String[] args) throws Exception {
    try (Connection db = DriverManager.getConnection(args[0]);
        IqClient cache = IqClient.builder().servers(args[1].split(",")).build()) {
      RowCodec<Integer, Score> rows = RowCodec.ofRecord(Score.class, Score::id, Score::id);
      try (Dendrite<Integer, Score> scores =
          Dendrite.builder(DomainType.INTEGER, rows)
              .collection("scores")
              .domain("id")
              .cache(cache)
              .writePolicy(WritePolicy.WRITE_THROUGH)
              .query("byId", (lb, ub) -> select(db, lb, ub)) // runs on a miss
              // the database write; the written row then replaces its old version where cached
              .command("set", WriteCommand.putting(Score.class, rows, score -> update(db, score)))
              .build()) {
        System.out.println(scores.get("byId", 100, 104)); // a miss: queried, then cached
        scores.write("set", 102, 102, new Score(102, 42)); // the database, then the cached result
        System.out.println(scores.get("byId", 100, 104)); // a hit, with 102's new points
      }
    }
  }

  static synchronized List<Score> select(Connection db, int lb, int ub) throws SQLException {
    try (PreparedStatement select =
        db.prepareStatement("SELECT id, points FROM scores WHERE id BETWEEN ? AND ? ORDER BY id")) {
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

  static synchronized void update(Connection db, Score score) throws SQLException {
    try (PreparedStatement update =
        db.prepareStatement("UPDATE scores SET points = ? WHERE id = ?")) {
      update.setLong(1, score.points());
      update.setInt(2, score.id());
      update.executeUpdate();
    }
  }
}
