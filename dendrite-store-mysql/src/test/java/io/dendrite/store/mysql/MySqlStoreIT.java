package io.dendrite.store.mysql;

import static io.dendrite.writeback.change.Change.addToSet;
import static io.dendrite.writeback.change.Change.delete;
import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreException;
import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.faults.ClosedPort;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every test runs through both drivers {@link MySqlStore#open} takes: each sends a drain's batches its own way. */
@ExtendWith(RealServers.class)
class MySqlStoreIT {
  private static final String USERS = "users";

  /** A driver, named by the URL scheme that picks it. */
  enum Driver {
    CONNECTOR_J("jdbc:mysql:"),
    MARIADB_BULK("jdbc:mariadb:");

    private final String scheme;

    Driver(String scheme) {
      this.scheme = scheme;
    }

    String url(String jdbcMySqlUrl) {
      return scheme + jdbcMySqlUrl.substring("jdbc:mysql:".length());
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void insertAssignIncrementDeleteAndRead(Driver driver, MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    try (MySqlStore store = open(driver, database)) {
      EntityKey ann = new EntityKey(USERS, 1);
      EntityKey bob = new EntityKey(USERS, 2);

      store.apply(
          List.of(
              new EntityChanges(ann, ChangeSequence.of(insert(Map.of("name", "ann", "score", 10)))),
              new EntityChanges(
                  bob, ChangeSequence.of(insert(Map.of("name", "bob", "score", 20))))));
      store.apply(
          List.of(
              new EntityChanges(
                  ann,
                  ChangeSequence.of(
                      set("name", "anne"),
                      inc("score", 5),
                      inc("balance", new BigDecimal("2.25")),
                      inc("score", 1))),
              new EntityChanges(bob, ChangeSequence.of(delete()))));

      assertThat(store.read(ann))
          .contains(
              new Entity(
                  ann, Map.of("name", "anne", "score", 16, "balance", new BigDecimal("2.25"))));
      assertThat(store.read(bob)).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void batchedApplyOfManyRowsAndRangeRead(Driver driver, MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    try (MySqlStore store = open(driver, database)) {
      List<EntityChanges> batch = new ArrayList<>();
      IntStream.rangeClosed(1, 200)
          .forEach(
              id ->
                  batch.add(
                      new EntityChanges(
                          new EntityKey(USERS, id),
                          ChangeSequence.of(
                              insert(Map.of("name", "u" + id, "score", id)),
                              inc("score", 1000),
                              inc("score", 0)))));

      store.apply(batch);

      assertThat(store.readRange(USERS, "score", 1050, 1053))
          .extracting(entity -> entity.key().id())
          .containsExactly(50, 51, 52, 53);
      assertThat(store.read(new EntityKey(USERS, 200)).orElseThrow().fields())
          .containsEntry("score", 1200);
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aSessionAppliedTwiceIsAppliedOnceUntilForgotten(Driver driver, MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    try (MySqlStore store = open(driver, database)) {
      EntityKey ann = new EntityKey(USERS, 1);
      store.apply(List.of(new EntityChanges(ann, ChangeSequence.of(insert(Map.of("score", 0))))));
      List<EntityChanges> session =
          List.of(new EntityChanges(ann, ChangeSequence.of(inc("score", 7))));

      assertThat(store.applyOnce("session-1", session)).isTrue();
      assertThat(store.applyOnce("session-1", session)).isFalse();
      assertThat(store.read(ann).orElseThrow().fields()).containsEntry("score", 7);

      assertThat(store.forgetAppliedSessionsBefore(Instant.now().minusSeconds(3600))).isZero();
      assertThat(store.forgetAppliedSessionsBefore(Instant.now().plusSeconds(1))).isEqualTo(1);
      assertThat(store.applyOnce("session-1", session)).as("forgotten, so applied again").isTrue();
      assertThat(store.read(ann).orElseThrow().fields()).containsEntry("score", 14);
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aFailedSessionLeavesNeitherChangesNorItsRecord(Driver driver, MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    try (MySqlStore store = open(driver, database)) {
      EntityKey ann = new EntityKey(USERS, 1);
      store.apply(List.of(new EntityChanges(ann, ChangeSequence.of(insert(Map.of("score", 0))))));
      List<EntityChanges> failing =
          List.of(
              new EntityChanges(ann, ChangeSequence.of(inc("score", 1))),
              new EntityChanges(ann, ChangeSequence.of(set("no_such_column", 1))));

      assertThatThrownBy(() -> store.applyOnce("session-2", failing))
          .isInstanceOf(DataStoreException.class)
          .isNotInstanceOf(DataStoreUnavailableException.class);

      assertThat(store.read(ann).orElseThrow().fields()).containsEntry("score", 0);
      assertThat(store.applyOnce("session-2", failing.subList(0, 1))).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void convertedIncrementReappliedAfterACrashCountsOnce(Driver driver, MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    try (MySqlStore store = open(driver, database)) {
      EntityKey ann = new EntityKey(USERS, 1);
      store.apply(List.of(new EntityChanges(ann, ChangeSequence.of(insert(Map.of("score", 10))))));
      ChangeSequence buffered = ChangeSequence.of(inc("score", 2), inc("score", 3));

      ChangeSequence converted = buffered.toIdempotent(store.read(ann).map(Entity::fields));
      store.apply(List.of(new EntityChanges(ann, converted)));
      store.apply(List.of(new EntityChanges(ann, converted)));

      assertThat(store.read(ann).orElseThrow().fields()).containsEntry("score", 15);
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void refusesChangesARowCannotTakeBeforeSendingAnything(Driver driver, MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    try (MySqlStore store = open(driver, database)) {
      List<EntityChanges> batch =
          List.of(
              new EntityChanges(
                  new EntityKey(USERS, 1), ChangeSequence.of(insert(Map.of("score", 1)))),
              new EntityChanges(new EntityKey(USERS, 2), ChangeSequence.of(addToSet("name", "x"))));

      assertThatThrownBy(() -> store.apply(batch))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not a row change");
      assertThatThrownBy(
              () ->
                  store.apply(
                      List.of(
                          new EntityChanges(
                              new EntityKey(USERS, 1), ChangeSequence.of(set("id", 5))))))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> store.read(new EntityKey("no_such_table", 1)))
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(store.read(new EntityKey(USERS, 1))).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void unreachableServerIsReportedAsUnavailable(Driver driver) {
    try (MySqlStore store =
        MySqlStore.open(
            driver.url("jdbc:mysql://127.0.0.1:" + ClosedPort.find() + "/down?user=u&password=p"),
            2,
            Duration.ofMillis(500))) {
      EntityKey key = new EntityKey(USERS, 1);

      assertThatThrownBy(() -> store.read(key))
          .isInstanceOf(DataStoreUnavailableException.class)
          .hasMessageContaining("MySQL unavailable")
          .matches(e -> ((DataStoreUnavailableException) e).notSent(), "not sent: no connection");
      assertThatThrownBy(
              () ->
                  store.applyOnce(
                      "s", List.of(new EntityChanges(key, ChangeSequence.of(delete())))))
          .isInstanceOf(DataStoreUnavailableException.class)
          .matches(e -> ((DataStoreUnavailableException) e).notSent(), "not sent: no connection");
    }
  }

  /**
   * A statement sent on a connection that then goes silent may have been applied: the failure must not say it was
   * not sent (TARDIS applies only a not-sent or idempotent change again).
   */
  @ParameterizedTest
  @EnumSource(Driver.class)
  @Timeout(60)
  void aStatementLostAfterItWasSentMayHaveBeenApplied(Driver driver, MySqlTestDatabase database)
      throws Exception {
    createUsers(database);
    Matcher target = Pattern.compile("://([^/:?]+):(\\d+)").matcher(database.jdbcUrl());
    assertThat(target.find()).as("host and port in the test database's URL").isTrue();
    try (CuttableProxy proxy =
            new CuttableProxy(target.group(1), Integer.parseInt(target.group(2)));
        MySqlStore store =
            MySqlStore.open(
                driver.url(
                    database
                        .jdbcUrl()
                        .replace(
                            target.group(1) + ":" + target.group(2), "127.0.0.1:" + proxy.port())),
                1,
                Duration.ofMillis(1500))) {
      EntityKey key = new EntityKey(USERS, 1);
      // The statement reaches the proxy, so it left this process, and goes no further.
      proxy.holdFrom(line -> line.toUpperCase(java.util.Locale.ROOT).contains("DELETE FROM"));

      assertThatThrownBy(
              () -> store.apply(List.of(new EntityChanges(key, ChangeSequence.of(delete())))))
          .isInstanceOf(DataStoreUnavailableException.class)
          .matches(e -> !((DataStoreUnavailableException) e).notSent(), "may have been sent");
    }
  }

  /** A server that takes the connection and never answers: the reply limit, not TCP's, ends the call. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  @Timeout(60)
  void silentServerIsReportedAsUnavailable(Driver driver) throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        MySqlStore store =
            MySqlStore.open(
                driver.url(
                    "jdbc:mysql://127.0.0.1:"
                        + silent.getLocalPort()
                        + "/silent?user=u&password=p"),
                2,
                Duration.ofMillis(500))) {
      EntityKey key = new EntityKey(USERS, 1);

      assertThatThrownBy(
              () -> store.apply(List.of(new EntityChanges(key, ChangeSequence.of(delete())))))
          .isInstanceOf(DataStoreUnavailableException.class)
          .hasMessageContaining("MySQL unavailable")
          .matches(
              e -> ((DataStoreUnavailableException) e).notSent(),
              "not sent: the connection's handshake never finished");
    }
  }

  @Test
  void aUrlOfAnotherDriverIsRefusedWithoutEchoingItsCredentials() {
    assertThatThrownBy(
            () ->
                MySqlStore.open(
                    "jdbc:postgresql://127.0.0.1/db?user=u&password=secret",
                    2,
                    Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("jdbc:mariadb:")
        .hasMessageNotContaining("secret");
  }

  private static void createUsers(MySqlTestDatabase database) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(64), score INT,"
              + " balance DECIMAL(10,2), INDEX (score))");
    }
  }

  private static MySqlStore open(Driver driver, MySqlTestDatabase database) {
    return MySqlStore.open(driver.url(database.jdbcUrl()), 4, Duration.ofSeconds(10));
  }
}
