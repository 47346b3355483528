package io.dendrite.store.mongodb;

import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.FenceToken;
import io.dendrite.core.StoreFence;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A former owner's write that reaches MongoDB after a new owner wrote the same document: the former owner read the
 * document's fence token, its update was held on the way (a pause), the new owner wrote, then the update went on,
 * found the token changed, read again and must stop there, not write again on top of the new owner's value: the new
 * owner raised the range's documents to its epoch ({@link MongoStore#raise}), and a document of a later epoch
 * refuses the former owner's write.
 */
@ExtendWith(RealServers.class)
class StoreFenceMongoIT {
  private static final String USERS = "fenced_users";
  private static final String FENCE = "Fence:fenced_users._id.0";
  private static final EntityKey KEY = new EntityKey(USERS, 7);

  @Test
  void aFormerOwnersLateWriteIsRefusedNotAppliedAgain(MongoTestDatabase database) throws Exception {
    LateWrite outcome = lateWrite(database, true);
    assertThat(outcome.score())
        .as("the new owner's value (the late write ended: %s)", outcome.ended())
        .isEqualTo(6);
    assertThat(outcome.ended()).isEqualTo("StoreFencedOutException");
  }

  /** The negative control: with no fence raised nor carried, the late write is applied again over the new one. */
  @Test
  void withoutTheStoreFenceTheFormerOwnersLateWriteLandsOverTheNewOne(MongoTestDatabase database)
      throws Exception {
    assertThat(lateWrite(database, false)).isEqualTo(new LateWrite("applied", 5));
  }

  /** How the former owner's write ended, and the score left. */
  private record LateWrite(String ended, long score) {}

  private static LateWrite lateWrite(MongoTestDatabase database, boolean fenced) throws Exception {
    try (MongoStore direct = open(database.connectionString(), database);
        CuttableProxy proxy = CuttableProxy.inFrontOf(database.connectionString());
        MongoStore former = open(proxy.routed(database.connectionString()), database)) {
      direct.apply(List.of(new EntityChanges(KEY, ChangeSequence.of(insert(Map.of("score", 0))))));
      CuttableProxy.Hold hold =
          proxy.holdFrom(request -> request.contains("$set") && request.contains("score"));
      CompletableFuture<String> late =
          CompletableFuture.supplyAsync(
              () -> {
                List<EntityChanges> five =
                    List.of(new EntityChanges(KEY, ChangeSequence.of(set("score", 5))));
                try {
                  if (fenced) {
                    former.apply(five, new FenceToken(FENCE, 1));
                  } else {
                    former.apply(five);
                  }
                  return "applied";
                } catch (RuntimeException refused) {
                  return refused.getClass().getSimpleName();
                }
              });
      assertThat(hold.awaitHeld(Duration.ofSeconds(30))).as("the update was held").isTrue();
      List<EntityChanges> six = List.of(new EntityChanges(KEY, ChangeSequence.of(set("score", 6))));
      if (fenced) {
        // The takeover: the new owner raises the range (ids 0..99) to its epoch, then writes.
        direct.raise(new StoreFence.Range(FENCE, USERS, "_id", 0, 99, 2));
        direct.apply(six, new FenceToken(FENCE, 2));
      } else {
        direct.apply(six);
      }
      hold.release();
      String ended = late.get(60, TimeUnit.SECONDS);
      return new LateWrite(ended, score(direct));
    }
  }

  private static long score(MongoStore store) {
    return ((Number) store.read(KEY).orElseThrow().fields().get("score")).longValue();
  }

  private static MongoStore open(String url, MongoTestDatabase database) {
    return MongoStore.open(url, database.name(), Duration.ofSeconds(30));
  }
}
