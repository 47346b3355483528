package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An engine that locks documents in its own process remembers the buffered writes it confirmed ({@code
 * KnownValues}) instead of reading them back. A second engine on the same documents, which it cannot see (here a
 * shared engine beside a range-owned one; likewise a {@code singleProcess} engine paused while its successor
 * wrote), may have changed one since: the first engine's next write must not overwrite that buffered write with
 * what it remembered.
 */
@ExtendWith(RealServers.class)
class SecondEngineOnTheSameDocumentsIT {
  private static final EntityKey ANN = new EntityKey("users", 1);

  @Test
  void anEngineThatRemembersABufferedWriteDoesNotOverwriteAnotherEnginesWriteToIt(
      MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = UsersTable.empty(database)) {
      cache.client.fences().raise(RangeOwnedEngineIT.FENCE, 1);
      try (DocumentWriteBack owned =
              DocumentWriteBack.builder()
                  .cache(cache.client)
                  .store(store)
                  .replicas(2)
                  .drainThreads(0)
                  .ownedRange(RangeOwnedEngineIT.range(1, new AtomicBoolean(true)))
                  .build();
          DocumentWriteBack shared =
              DocumentWriteBack.builder()
                  .cache(cache.client)
                  .store(store)
                  .replicas(2)
                  .drainThreads(0)
                  .build()) {
        owned.write(ANN, ChangeSequence.of(insert(Map.of("name", "ann", "score", 1))));
        shared.write(ANN, ChangeSequence.of(inc("score", 10))); // acknowledged
        owned.write(ANN, ChangeSequence.of(inc("score", 100)));
        owned.drainNow();
        shared.drainNow();
      }
      assertThat(store.read(ANN).orElseThrow().fields().get("score"))
          .as("1 + 10 + 100: each acknowledged write applied once")
          .isEqualTo(111);
    }
  }
}
