package io.dendrite.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealServers.class)
class MySqlFixtureIT {

  @Test
  void createInsertAndRangeSelectWithOrderByAndLimit(MySqlTestDatabase database)
      throws SQLException {
    try (Connection connection = database.connect()) {
      try (Statement statement = connection.createStatement()) {
        statement.execute(
            "CREATE TABLE usertable (id INT PRIMARY KEY, score INT NOT NULL, name VARCHAR(32), "
                + "INDEX by_score (score))");
      }
      try (PreparedStatement insert =
          connection.prepareStatement("INSERT INTO usertable VALUES (?, ?, ?)")) {
        for (int id = 1; id <= 100; id++) {
          insert.setInt(1, id);
          insert.setInt(2, (id * 37) % 101);
          insert.setString(3, "user" + id);
          insert.addBatch();
        }
        insert.executeBatch();
      }

      List<Integer> scores = new ArrayList<>();
      try (PreparedStatement range =
          connection.prepareStatement(
              "SELECT score FROM usertable WHERE score BETWEEN ? AND ? ORDER BY score DESC LIMIT 5")) {
        range.setInt(1, 10);
        range.setInt(2, 50);
        try (ResultSet rows = range.executeQuery()) {
          while (rows.next()) {
            scores.add(rows.getInt(1));
          }
        }
      }
      assertThat(scores).containsExactly(50, 49, 48, 47, 46);
      assertThat(connection.getCatalog()).isEqualTo(database.name());
    }
  }
}
