package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.server.Credentials;
import io.dendrite.iq.server.IqServerConfig;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 37, case 3: a logged-in user who is not a pin user {@code set}s a {@code BW:} key holding an encoded change
 * sequence for a document that has no buffered write. Write-back must never apply it: the server refuses the store
 * (write-back's key prefixes are reserved for the pin users), and an engine that meets such a value anyway (a
 * server whose reserved prefixes leave {@code BW:} out) refuses it because the value is not pinned.
 */
@ExtendWith(RealServers.class)
class ForgedBufferedWriteIT {
  private static final String ACCOUNTS = "forged_accounts";
  private static final EntityKey ANN = new EntityKey(ACCOUNTS, 1);

  @Test
  void aForgedBufferedWriteIsRefusedByTheServerAndNeverReachesTheDatabase(
      MySqlTestDatabase database) throws SQLException {
    createAccounts(database);
    try (EmbeddedIqServers cache = serversWithPinUser(server -> server);
        IqClient guest = guestOf(cache);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .build()) {
      writeBack.write(ANN, ChangeSequence.of(insert(Map.of("name", "ann", "balance", 100))));
      writeBack.drainNow();
      String buffered = BufferedWriteKey.of(ANN);

      Throwable refused =
          catchThrowable(
              () -> guest.set(buffered, ChangeSequence.of(set("balance", 1_000_000)).encode()));

      assertThat(writeBack.read(ANN).orElseThrow().fields())
          .as("the application reads what it wrote, not the forged value")
          .containsEntry("balance", 100);
      writeBack.drainNow();
      assertThat(balanceIn(database)).as("the database keeps the balance").isEqualTo(100);
      assertThat(refused)
          .as("the server refuses the store, naming the key and why")
          .hasMessageContaining(
              "user guest may not change reserved key "
                  + buffered
                  + " (prefix BW: is reserved for the pin users)");
      assertThat(guest.get(buffered)).as("nothing was stored").isEmpty();
    }
  }

  /**
   * Defence in depth: a server told to reserve no prefix stores the forged value (unpinned, since the guest may not
   * pin). The engine sees that it is not pinned: it neither serves nor drains it, logs and counts it.
   */
  @Test
  void anUnpinnedValueUnderBufferedWriteKeysIsNeverAppliedByTheEngine(MySqlTestDatabase database)
      throws SQLException {
    createAccounts(database);
    try (EmbeddedIqServers cache =
            serversWithPinUser(server -> server.reservedPrefixes(List.of()));
        IqClient guest = guestOf(cache);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .build()) {
      writeBack.write(ANN, ChangeSequence.of(insert(Map.of("name", "ann", "balance", 100))));
      writeBack.drainNow();
      String buffered = BufferedWriteKey.of(ANN);
      guest.set(buffered, ChangeSequence.of(set("balance", 1_000_000)).encode());
      assertThat(guest.get(buffered)).as("the negative control: the server stored it").isPresent();

      assertThat(writeBack.read(ANN).orElseThrow().fields()).containsEntry("balance", 100);
      writeBack.drainNow();
      assertThat(balanceIn(database)).isEqualTo(100);
      assertThat(writeBack.metrics().unpinnedRefused())
          .as("the unpinned value was counted")
          .isPositive();

      writeBack.write(ANN, ChangeSequence.of(set("balance", 150)));
      writeBack.drainNow();
      assertThat(balanceIn(database))
          .as("the application's own next write replaces the forged value and drains")
          .isEqualTo(150);
    }
  }

  private static EmbeddedIqServers serversWithPinUser(
      UnaryOperator<IqServerConfig.Builder> moreSettings) {
    return EmbeddedIqServers.builder()
        .count(1)
        .server(
            server ->
                moreSettings.apply(
                    server
                        .credentials(Credentials.of(Map.of("app", "s3cret", "guest", "gu3st")))
                        .pinUsers(Set.of("app"))))
        .client(client -> client.login("app", "s3cret"))
        .start();
  }

  private static IqClient guestOf(EmbeddedIqServers cache) {
    return IqClient.builder()
        .servers(cache.client.config().servers())
        .login("guest", "gu3st")
        .build();
  }

  private static void createAccounts(MySqlTestDatabase database) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE " + ACCOUNTS + " (id INT PRIMARY KEY, name VARCHAR(64), balance INT)");
    }
  }

  private static int balanceIn(MySqlTestDatabase database) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement();
        var rows = statement.executeQuery("SELECT balance FROM " + ACCOUNTS + " WHERE id = 1")) {
      rows.next();
      return rows.getInt(1);
    }
  }

  private static MySqlStore open(MySqlTestDatabase database) {
    return MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
  }
}
