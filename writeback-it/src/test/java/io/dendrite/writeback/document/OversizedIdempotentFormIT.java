package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.push;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.store.mongodb.MongoStore;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.IdempotentFormRefusedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A {@code $push} is drained in its idempotent form, the whole array, pinned before it is applied. When that form is
 * larger than the cache servers' item limit the cache refuses it, and the document cannot be drained: it stays
 * buffered, and the drain goes on with every other document (it used to fail the whole batch, and so every pass,
 * for good).
 */
@ExtendWith(RealServers.class)
class OversizedIdempotentFormIT {
  private static final String LISTS = "lists";

  @Test
  void aDocumentWhoseIdempotentFormDoesNotFitStaysBufferedAndTheOthersDrain(
      MongoTestDatabase database) {
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(2).server(s -> s.maxItemSize(4096)).start();
        MongoStore store =
            MongoStore.open(database.connectionString(), database.name(), Duration.ofSeconds(10))) {
      EntityKey big = new EntityKey(LISTS, 0);
      List<String> longList =
          IntStream.range(0, 400).mapToObj(i -> "element-" + i).toList(); // about 6 KB
      store.apply(
          List.of(new EntityChanges(big, ChangeSequence.of(insert(Map.of("items", longList))))));
      try (DocumentWriteBack engine =
          DocumentWriteBack.builder()
              .cache(cache.client)
              .store(store)
              .drainThreads(0)
              .drainBatch(64)
              .drainOnClose(Duration.ZERO)
              .build()) {
        engine.write(big, ChangeSequence.of(push("items", "one more")));
        List<EntityKey> small = new ArrayList<>();
        for (int id = 1; id <= 10; id++) {
          EntityKey key = new EntityKey(LISTS, id);
          small.add(key);
          engine.write(key, ChangeSequence.of(insert(Map.of("items", List.of("a")))));
        }

        assertThatThrownBy(engine::drainNow)
            .isInstanceOf(IdempotentFormRefusedException.class)
            .hasMessageContaining(big.toString())
            .hasMessageContaining("stay buffered");
        for (EntityKey key : small) {
          assertThat(store.read(key)).as("%s drained", key).isPresent();
        }
        assertThat(engine.metrics().pendingWrites())
            .as("the large one stays buffered")
            .isEqualTo(1);
        assertThat(store.read(big).orElseThrow().fields().get("items"))
            .as("not applied")
            .isEqualTo(longList);
      }
    }
  }
}
