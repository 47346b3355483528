package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.insert;

import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import io.dendrite.writeback.store.MySqlStore;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.stream.IntStream;

/** The table {@code users} (id, name, score) of the one-fault-at-a-time tests: rows {@code u<id>}, score 0. */
final class UsersTable {
  private UsersTable() {}

  /** Creates and seeds the table with {@code documents} rows; returns a direct store over it. */
  static MySqlStore seed(MySqlTestDatabase database, int documents) throws Exception {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
    }
    MySqlStore mysql = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
    mysql.apply(
        IntStream.range(0, documents)
            .mapToObj(
                id ->
                    new EntityChanges(
                        key(id), ChangeSequence.of(insert(Map.of("name", "u" + id, "score", 0)))))
            .toList());
    return mysql;
  }

  static EntityKey key(int id) {
    return new EntityKey("users", id);
  }

  static String name(MySqlStore mysql, EntityKey key) {
    return (String) field(mysql, key, "name");
  }

  static long score(MySqlStore mysql, EntityKey key) {
    return ((Number) field(mysql, key, "score")).longValue();
  }

  private static Object field(MySqlStore mysql, EntityKey key, String field) {
    return mysql.read(key).map(Entity::fields).orElseThrow().get(field);
  }
}
