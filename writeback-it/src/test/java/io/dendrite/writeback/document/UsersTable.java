package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.insert;

import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * The {@code users} table that the cache-server fault tests write through: documents 1..n with a name and a score,
 * seeded in MariaDB and in the test's model, and the check of what reached the database.
 */
final class UsersTable {
  private UsersTable() {}

  static List<EntityKey> documents(int count) {
    return IntStream.rangeClosed(1, count).mapToObj(id -> new EntityKey("users", id)).toList();
  }

  static ChangeSequence seed(EntityKey key) {
    return ChangeSequence.of(insert(Map.of("name", "u" + key.id(), "score", 0)));
  }

  /** Creates the table with {@code documents} seeded, records the seeds in {@code model}, and opens a store on it. */
  static MySqlStore seeded(
      MySqlTestDatabase database, List<EntityKey> documents, DocumentModel model) throws Exception {
    MySqlStore store = empty(database);
    List<EntityChanges> seed = new ArrayList<>();
    documents.forEach(key -> seed.add(new EntityChanges(key, seed(key))));
    store.apply(seed);
    documents.forEach(key -> model.record(key, seed(key)));
    return store;
  }

  /** Creates the table, empty, and opens a store on it. */
  static MySqlStore empty(MySqlTestDatabase database) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
    }
    return MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
  }

  /** {@code <id>: expected ... but found ...} for every document whose row differs from the model. */
  static List<String> mismatches(MySqlStore store, DocumentModel model, List<EntityKey> documents) {
    List<String> mismatches = new ArrayList<>();
    for (EntityKey key : documents) {
      Optional<Map<String, Object>> stored = store.read(key).map(Entity::fields);
      if (!model.matches(key, stored)) {
        mismatches.add(key.id() + ": expected " + model.expected(key) + " but found " + stored);
      }
    }
    return mismatches;
  }
}
