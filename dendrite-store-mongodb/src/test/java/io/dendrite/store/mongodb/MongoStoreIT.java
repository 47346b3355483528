package io.dendrite.store.mongodb;

import static io.dendrite.writeback.change.Change.addToSet;
import static io.dendrite.writeback.change.Change.delete;
import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.pull;
import static io.dendrite.writeback.change.Change.push;
import static io.dendrite.writeback.change.Change.set;
import static io.dendrite.writeback.change.Change.unset;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.faults.ClosedPort;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealServers.class)
class MongoStoreIT {
  private static final String USERS = "users";

  @Test
  void everyChangeKindAgreesWithTheInMemorySemantics(MongoTestDatabase database) {
    try (MongoStore store = open(database)) {
      // No BigDecimal here: the test server (FerretDB 1.x) drops the connection on Decimal128;
      // MongoDB takes it.
      Map<String, Object> initial =
          Map.of(
              "name",
              "ann",
              "visits",
              1,
              "tags",
              List.of("a", "b", "a"),
              "balance",
              1.5,
              "seen",
              Instant.ofEpochMilli(1_700_000_000_000L),
              "profile",
              Map.of("city", "LA"));
      ChangeSequence changes =
          ChangeSequence.of(
              set("name", "bob"),
              unset("profile"),
              inc("visits", 4),
              inc("balance", 0.25),
              addToSet("tags", "c"),
              addToSet("tags", "b"),
              push("log", "x"),
              pull("tags", "a"),
              set("nested", Map.of("k", List.of(1, 2L))));
      EntityKey ann = new EntityKey(USERS, 1);

      store.apply(List.of(new EntityChanges(ann, ChangeSequence.of(insert(initial)))));
      store.apply(List.of(new EntityChanges(ann, changes)));

      assertThat(store.read(ann).map(Entity::fields))
          .isEqualTo(changes.applyTo(Optional.of(initial)));
      assertThat(store.read(ann).orElseThrow().fields())
          .containsEntry("visits", 5)
          .containsEntry("tags", List.of("b", "c"));
    }
  }

  @Test
  void insertIsAnUpsertAndDeleteRemoves(MongoTestDatabase database) {
    try (MongoStore store = open(database)) {
      EntityKey key = new EntityKey(USERS, "u1");

      store.apply(
          List.of(new EntityChanges(key, ChangeSequence.of(insert(Map.of("a", 1, "b", 2))))));
      store.apply(List.of(new EntityChanges(key, ChangeSequence.of(insert(Map.of("c", 3))))));
      assertThat(store.read(key)).contains(new Entity(key, Map.of("c", 3)));

      store.apply(List.of(new EntityChanges(key, ChangeSequence.of(delete(), set("a", 1)))));
      assertThat(store.read(key)).isEmpty();
    }
  }

  @Test
  void batchOfManyDocumentsWithMultiStepSequencesAndRangeRead(MongoTestDatabase database) {
    try (MongoStore store = open(database)) {
      List<EntityChanges> batch = new ArrayList<>();
      IntStream.rangeClosed(1, 40)
          .forEach(
              id ->
                  batch.add(
                      new EntityChanges(
                          new EntityKey(USERS, id),
                          ChangeSequence.of(
                              insert(Map.of("score", id * 10)),
                              push("log", "a"),
                              push("log", "b"),
                              inc("n", 1),
                              inc("n", 0.5)))));
      batch.add(
          new EntityChanges(
              new EntityKey("others", 1), ChangeSequence.of(insert(Map.of("score", 50)))));

      store.apply(batch);

      assertThat(store.read(new EntityKey(USERS, 7)).orElseThrow().fields())
          .isEqualTo(Map.of("score", 70, "log", List.of("a", "b"), "n", 1.5));
      List<Entity> inRange = store.readRange(USERS, "score", 50, 80);
      assertThat(inRange).extracting(entity -> entity.key().id()).containsExactly(5, 6, 7, 8);
      assertThatThrownBy(() -> store.readRange(USERS, "score", 80, 50))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void convertedIncrementReappliedAfterACrashCountsOnce(MongoTestDatabase database) {
    try (MongoStore store = open(database)) {
      EntityKey key = new EntityKey(USERS, 9);
      store.apply(List.of(new EntityChanges(key, ChangeSequence.of(insert(Map.of("visits", 10))))));
      ChangeSequence buffered =
          ChangeSequence.of(inc("visits", 2), push("log", "v"), inc("visits", 3));

      ChangeSequence converted = buffered.toIdempotent(store.read(key).map(Entity::fields));
      store.apply(List.of(new EntityChanges(key, converted)));
      // crash before the buffered write was deleted: the next drainer applies the persisted
      // converted form again
      ChangeSequence persisted = ChangeSequence.decode(converted.encode());
      store.apply(
          List.of(
              new EntityChanges(key, persisted.toIdempotent(store.read(key).map(Entity::fields)))));

      assertThat(store.read(key).orElseThrow().fields())
          .isEqualTo(Map.of("visits", 15, "log", List.of("v")));
    }
  }

  @Test
  void refusesChangesToTheIdBeforeSendingAnything(MongoTestDatabase database) {
    try (MongoStore store = open(database)) {
      EntityKey key = new EntityKey(USERS, 1);
      List<EntityChanges> batch =
          List.of(
              new EntityChanges(new EntityKey(USERS, 2), ChangeSequence.of(insert(Map.of("a", 1)))),
              new EntityChanges(key, ChangeSequence.of(set("_id", 5))));

      assertThatThrownBy(() -> store.apply(batch))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("_id");
      assertThat(store.read(new EntityKey(USERS, 2))).isEmpty();
    }
  }

  @Test
  void unreachableServerIsReportedAsUnavailable() {
    try (MongoStore store =
        MongoStore.open(
            "mongodb://127.0.0.1:" + ClosedPort.find(), "down", Duration.ofMillis(500))) {
      EntityKey key = new EntityKey(USERS, 1);

      assertThatThrownBy(() -> store.read(key))
          .isInstanceOf(DataStoreUnavailableException.class)
          .hasMessageContaining("MongoDB unavailable")
          .matches(e -> ((DataStoreUnavailableException) e).notSent(), "not sent: no server");
      assertThatThrownBy(
              () -> store.apply(List.of(new EntityChanges(key, ChangeSequence.of(set("a", 1))))))
          .isInstanceOf(DataStoreUnavailableException.class)
          .matches(e -> ((DataStoreUnavailableException) e).notSent(), "not sent: no server");
    }
  }

  /**
   * An update whose reply timed out reaches the server only after a newer write of the same document (the proxy
   * holds it until then): it must change nothing. Finding 15: a drain's late {@code $set} undid a newer increment.
   */
  @Test
  void aWriteThatArrivesLateDoesNotUndoANewerOne(MongoTestDatabase database) throws Exception {
    assertThat(scoreAfterALateWrite(database, true)).isEqualTo(6);
  }

  /** The control of the test above: without the fence the late write lands over the newer one. */
  @Test
  void withoutTheFenceAWriteThatArrivesLateUndoesANewerOne(MongoTestDatabase database)
      throws Exception {
    assertThat(scoreAfterALateWrite(database, false)).isEqualTo(5);
  }

  /** Sets score 5 through a proxy that holds the update past its timeout, then 6 directly, then lets 5 go. */
  private static long scoreAfterALateWrite(MongoTestDatabase database, boolean fenced)
      throws Exception {
    EntityKey key = new EntityKey(USERS, 7);
    try (MongoStore direct = open(database);
        CuttableProxy proxy = CuttableProxy.inFrontOf(database.connectionString());
        MongoStore late =
            MongoStore.open(
                proxy.routed(database.connectionString()),
                database.name(),
                Duration.ofSeconds(1),
                fenced)) {
      direct.apply(List.of(new EntityChanges(key, ChangeSequence.of(insert(Map.of("score", 0))))));
      CuttableProxy.Hold hold =
          proxy.holdFrom(request -> request.contains("$set") && request.contains("score"));

      assertThatThrownBy(
              () -> late.apply(List.of(new EntityChanges(key, ChangeSequence.of(set("score", 5))))))
          .isInstanceOf(DataStoreUnavailableException.class);
      assertThat(hold.awaitHeld(Duration.ofSeconds(5))).as("the update was held").isTrue();
      direct.apply(List.of(new EntityChanges(key, ChangeSequence.of(set("score", 6)))));
      hold.release();

      // The late update reaches the server within moments of its release (the control shows it
      // lands).
      long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
      long score = 6;
      while (score == 6 && System.nanoTime() < deadline) {
        Thread.sleep(50);
        score = ((Number) direct.read(key).orElseThrow().fields().get("score")).longValue();
      }
      return score;
    }
  }

  private static MongoStore open(MongoTestDatabase database) {
    return MongoStore.open(database.connectionString(), database.name(), Duration.ofSeconds(10));
  }
}
