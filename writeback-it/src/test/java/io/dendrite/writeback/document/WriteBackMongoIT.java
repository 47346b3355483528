package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.addToSet;
import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.pull;
import static io.dendrite.writeback.change.Change.push;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.store.mongodb.MongoStore;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealServers.class)
class WriteBackMongoIT {
  private static final String USERS = "users";

  @Test
  void backgroundThreadsDrainEveryKindOfChangeToTheModel(MongoTestDatabase database)
      throws InterruptedException {
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MongoStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache.client)
                .store(store)
                .replicas(2)
                .partitions(4)
                .drainThreads(2)
                .idlePause(Duration.ofMillis(10))
                .build()) {
      for (int round = 0; round < 5; round++) {
        for (int user = 0; user < 10; user++) {
          EntityKey key = new EntityKey(USERS, "user " + user);
          model.write(
              writeBack,
              key,
              round == 0
                  ? ChangeSequence.of(insert(Map.of("visits", 0, "tags", List.of("new"))))
                  : ChangeSequence.of(
                      inc("visits", round),
                      push("log", "r" + round),
                      addToSet("tags", "t" + round % 2),
                      pull("tags", "new"),
                      set("last", round)));
        }
      }

      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (writeBack.metrics().pendingWrites() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }

      WriteBackMetrics metrics = writeBack.metrics();
      assertThat(metrics.pendingWrites()).isZero();
      assertThat(metrics.drained()).isGreaterThanOrEqualTo(10);
      model.assertStoreMatches(store);
      assertThat(store.read(new EntityKey(USERS, "user 3")).orElseThrow().fields())
          .containsEntry("visits", 10)
          .containsEntry("log", List.of("r1", "r2", "r3", "r4"))
          .containsEntry("tags", List.of("t1", "t0"));
    }
  }

  @Test
  void readSeesBufferedPushesAndIncrementsOnce(MongoTestDatabase database) {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MongoStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .build()) {
      EntityKey ann = new EntityKey(USERS, "ann");
      writeBack.write(ann, ChangeSequence.of(insert(Map.of("visits", 1))));
      writeBack.drainNow();
      writeBack.write(ann, ChangeSequence.of(inc("visits", 1), push("log", "a")));
      writeBack.write(ann, ChangeSequence.of(inc("visits", 1), push("log", "b")));

      assertThat(writeBack.read(ann).map(Entity::fields))
          .contains(Map.of("visits", 3, "log", List.of("a", "b")));
      writeBack.write(ann, ChangeSequence.of(push("log", "c")));
      writeBack.drainNow();
      assertThat(store.read(ann).map(Entity::fields))
          .contains(Map.of("visits", 3, "log", List.of("a", "b", "c")));
    }
  }

  /** Increments and assignments convert to assignments of about their own size, which still fit. */
  @Test
  void aFullPinnedQuotaOnTheServerFallsBackToWriteThrough(MongoTestDatabase database) {
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(1).pinnedMemoryBytes(1_500).start();
        MongoStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .build()) {
      for (int round = 0; round < 6; round++) {
        for (int user = 0; user < 15; user++) {
          EntityKey key = new EntityKey(USERS, user);
          model.write(
              writeBack,
              key,
              round == 0
                  ? ChangeSequence.of(insert(Map.of("visits", 0)))
                  : ChangeSequence.of(inc("visits", round), set("last", "entry number " + round)));
        }
      }

      assertThat(writeBack.metrics().writeThroughFallbacks()).isPositive();
      writeBack.drainNow();
      model.assertStoreMatches(store);
      assertThat(store.read(new EntityKey(USERS, 14)).orElseThrow().fields())
          .containsEntry("visits", 15);
      assertThat(writeBack.metrics().pendingWrites()).isZero();
    }
  }

  private static MongoStore open(MongoTestDatabase database) {
    return MongoStore.open(database.connectionString(), database.name(), Duration.ofSeconds(10));
  }
}
