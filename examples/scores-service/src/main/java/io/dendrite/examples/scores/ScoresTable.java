package io.dendrite.examples.scores;

import java.util.List;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/** The database's side: what a miss queries and what a write updates, over Spring's {@link JdbcClient}. */
@Component
public class ScoresTable {
  private final JdbcClient db;

  public ScoresTable(JdbcClient db) {
    this.db = db;
  }

  /** The rows with ids in [{@code from}, {@code to}], by id: the query a miss runs. */
  public List<Score> select(int from, int to) {
    return db.sql("SELECT id, points FROM scores WHERE id BETWEEN ? AND ? ORDER BY id")
        .params(from, to)
        .query(Score.class)
        .list();
  }

  /** Sets a row's points: the write a write-through command makes before Dendrite updates the cached results. */
  public void update(Score score) {
    db.sql("UPDATE scores SET points = ? WHERE id = ?").params(score.points(), score.id()).update();
  }
}
