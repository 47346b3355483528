package io.dendrite.store.mysql;

import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.FenceToken;
import io.dendrite.core.StoreFence;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A former owner's drain batch whose transaction is held on its way to MySQL (its last statement, the fence check,
 * or its commit, held by a proxy: a pause) while a new owner raises the range's fence and reads the row, as a range
 * miss does before it caches it. The batch must be rolled back, or the row the new owner read is stale.
 */
@ExtendWith(RealServers.class)
class StoreFenceMySqlIT {
  private static final String FENCE = "Fence:fenced_users.id.0";
  private static final EntityKey ANN = new EntityKey("fenced_users", 7);

  @Test
  void aFormerOwnersBatchThatCommitsAfterTheTakeoverIsRolledBack(MySqlTestDatabase database)
      throws Exception {
    LateBatch outcome = lateBatch(database, true);
    assertThat(outcome.ended()).isEqualTo("StoreFencedOutException");
    assertThat(outcome.scoreAfter())
        .as("the row as the new owner read it")
        .isEqualTo(outcome.readByNewOwner());
  }

  /** The negative control: no fence raised nor carried, and the row the new owner read is stale once it commits. */
  @Test
  void withoutTheStoreFenceTheFormerOwnersBatchLandsAfterTheNewOwnerRead(MySqlTestDatabase database)
      throws Exception {
    assertThat(lateBatch(database, false)).isEqualTo(new LateBatch("applied", 0, 5));
  }

  /** How the former owner's batch ended, the score the new owner read meanwhile, and the score left. */
  private record LateBatch(String ended, long readByNewOwner, long scoreAfter) {}

  private static LateBatch lateBatch(MySqlTestDatabase database, boolean fenced) throws Exception {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE fenced_users (id INT PRIMARY KEY, score INT)");
    }
    try (MySqlStore direct = open(database.jdbcUrl());
        CuttableProxy proxy = CuttableProxy.inFrontOf(database.jdbcUrl());
        MySqlStore former = open(proxy.routed(database.jdbcUrl()))) {
      direct.apply(List.of(new EntityChanges(ANN, ChangeSequence.of(insert(Map.of("score", 0))))));
      FenceToken first = new FenceToken(FENCE, 1);
      EntityChanges bob =
          new EntityChanges(
              new EntityKey("fenced_users", 8), ChangeSequence.of(insert(Map.of("score", 0))));
      if (fenced) {
        direct.raise(range(1));
        former.apply(List.of(bob), first); // the former owner's earlier drain: tables known
      } else {
        former.apply(List.of(bob));
      }
      CuttableProxy.Hold hold =
          proxy.holdFrom(
              request ->
                  request.contains("LOCK IN SHARE MODE")
                      || request.toLowerCase().contains("commit"));
      CompletableFuture<String> late =
          CompletableFuture.supplyAsync(
              () -> {
                List<EntityChanges> five =
                    List.of(new EntityChanges(ANN, ChangeSequence.of(set("score", 5))));
                try {
                  if (fenced) {
                    former.apply(five, first);
                  } else {
                    former.apply(five);
                  }
                  return "applied";
                } catch (RuntimeException refused) {
                  return refused.getClass().getSimpleName();
                }
              });
      assertThat(hold.awaitHeld(Duration.ofSeconds(30))).as("the batch was held").isTrue();
      if (fenced) {
        direct.raise(range(2)); // the takeover, before the new owner reads anything
      }
      long read = score(direct);
      hold.release();
      String ended = late.get(60, TimeUnit.SECONDS);
      return new LateBatch(ended, read, score(direct));
    }
  }

  private static StoreFence.Range range(long epoch) {
    return new StoreFence.Range(FENCE, "fenced_users", "id", 0, 99, epoch);
  }

  private static long score(MySqlStore store) {
    return ((Number) store.read(ANN).orElseThrow().fields().get("score")).longValue();
  }

  private static MySqlStore open(String url) {
    return MySqlStore.open(url, 2, Duration.ofSeconds(30));
  }
}
