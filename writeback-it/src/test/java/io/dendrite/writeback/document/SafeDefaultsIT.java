package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.insert;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An engine built with nothing but the required settings loses no acknowledged write when one cache server is lost:
 * it keeps each buffered write on two servers by default. (With the old default of one copy, the writes buffered on
 * the lost server were gone: about half of them here.)
 */
@ExtendWith(RealServers.class)
class SafeDefaultsIT {

  @Test
  void withDefaultSettingsLosingOneCacheServerLosesNoBufferedWrite(MySqlTestDatabase database)
      throws Exception {
    List<EntityKey> documents = UsersTable.documents(24);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = UsersTable.empty(database)) {
      DocumentWriteBack engine =
          DocumentWriteBack.builder()
              .cache(cache.client)
              .store(store)
              .drainThreads(0)
              .drainOnClose(Duration.ZERO)
              .build();
      for (EntityKey key : documents) {
        engine.write(key, ChangeSequence.of(insert(Map.of("name", "u" + key.id(), "score", 7))));
      }
      engine.close(); // hands every buffered write over, undrained
      cache.lose(0);

      // The lost server is replaced quickly here (30 s by default): the next one on the ring takes
      // its place.
      try (DocumentWriteBack successor =
          DocumentWriteBack.builder()
              .cache(cache.client)
              .store(store)
              .drainThreads(1)
              .idlePause(Duration.ofMillis(10))
              .replicaCheckInterval(Duration.ofMillis(100))
              .replaceDownServerAfter(Duration.ofMillis(300))
              .build()) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() - deadline < 0
            && documents.stream().anyMatch(key -> store.read(key).isEmpty())) {
          Thread.sleep(100);
        }
      }
      for (EntityKey key : documents) {
        assertThat(store.read(key)).as("%s reached the database", key).isPresent();
      }
    }
  }
}
