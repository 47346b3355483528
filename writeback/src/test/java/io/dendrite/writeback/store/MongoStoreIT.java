package io.dendrite.writeback.store;

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
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
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

  private static MongoStore open(MongoTestDatabase database) {
    return MongoStore.open(database.connectionString(), database.name(), Duration.ofSeconds(10));
  }
}
