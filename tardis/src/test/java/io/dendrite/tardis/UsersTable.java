package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.insert;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;

/**
 * The {@code users} table that the fault tests write through TARDIS: created and seeded in MariaDB, read back to
 * check the database against the acknowledged writes, and the waits for recovery they share.
 */
final class UsersTable {
  private UsersTable() {}

  /**
   * Creates {@code users (id, name, score{@code columns})} and inserts rows 0 to {@code documents} - 1, each named
   * {@code u<id>} with score 0.
   *
   * @param columns more column definitions, each after a comma ({@code ", bio MEDIUMTEXT"}), or ""
   */
  static MySqlStore seed(MySqlTestDatabase database, int documents, String columns)
      throws Exception {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(64), score INT" + columns + ")");
    }
    MySqlStore mysql = MySqlStore.open(database.jdbcUrl(), 8, Duration.ofSeconds(10));
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

  static long score(DataStore store, int id) {
    return ((Number) row(store, id).get("score")).longValue();
  }

  static String name(DataStore store, int id) {
    return (String) row(store, id).get("name");
  }

  private static Map<String, Object> row(DataStore store, int id) {
    return store.read(key(id)).map(Entity::fields).orElseThrow();
  }

  /** Waits until the instance is in normal mode with nothing buffered; fails after a generous deadline. */
  static void awaitRecovered(Tardis tardis) throws InterruptedException {
    awaitOrFail(
        () -> tardis.mode() == Mode.NORMAL && tardis.metrics().bufferedDocuments() == 0,
        "recovery to end");
  }

  /** Waits until {@code condition} holds; fails after 60 s (a busy machine, never a timing assertion). */
  static void awaitOrFail(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for %s", what).isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
