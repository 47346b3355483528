package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.WriteOptions;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.EngineClaim;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An engine locks in its own process ({@code singleProcess(true)}) only while it holds the cache tier's write-back
 * record alone: two such engines (two instances of a service that both set the flag) used to lock the same
 * documents each in its own JVM and overwrite each other's buffered writes; now the second is refused when it
 * starts, and so is any engine beside it of the other kind.
 */
@ExtendWith(RealServers.class)
class EngineClaimIT {
  private static final Duration LIFETIME = Duration.ofSeconds(2);

  private static DocumentWriteBack.Builder engine(
      EmbeddedIqServers cache, MySqlStore store, boolean alone) {
    return DocumentWriteBack.builder()
        .cache(cache.client)
        .store(store)
        .replicas(2)
        .drainThreads(0)
        .singleProcess(alone)
        .claimLifetime(LIFETIME);
  }

  @Test
  void aSecondSingleProcessEngineIsRefusedAndStartsOnceTheFirstHasClosed(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = UsersTable.empty(database)) {
      DocumentWriteBack first = engine(cache, store, true).build();
      EntityKey ann = new EntityKey("users", 1);
      first.write(ann, ChangeSequence.of(insert(Map.of("name", "ann", "score", 1))));

      assertThatThrownBy(() -> engine(cache, store, true).build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("held by \"exclusive " + ProcessHandle.current().pid() + "@")
          .hasMessageContaining("must be the only engine of its cache tier");
      assertThatThrownBy(() -> engine(cache, store, false).build())
          .as("nor may an engine that locks by leases run beside it")
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("no other engine may run beside it");

      first.close();
      try (DocumentWriteBack second = engine(cache, store, true).build()) {
        second.write(ann, ChangeSequence.of(inc("score", 41)));
        second.drainNow();
      }
      assertThat(store.read(ann).orElseThrow().fields()).containsEntry("score", 42);
    }
  }

  @Test
  void enginesThatLockByLeasesRunTogetherAndKeepASingleProcessOneOut(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = UsersTable.empty(database);
        DocumentWriteBack one = engine(cache, store, false).build();
        DocumentWriteBack two = engine(cache, store, false).build()) {
      assertThatThrownBy(() -> engine(cache, store, true).build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("held by \"shared\"");
      EntityKey ann = new EntityKey("users", 1);
      one.write(ann, ChangeSequence.of(insert(Map.of("name", "ann", "score", 1))));
      two.write(ann, ChangeSequence.of(inc("score", 1)));
      two.drainNow();
      assertThat(store.read(ann).orElseThrow().fields()).containsEntry("score", 2);
    }
  }

  /**
   * The holder's record was taken over (as when it was paused past the lifetime and another engine started): its
   * next write is refused, with nothing buffered, instead of locking documents another engine now locks.
   */
  @Test
  void anEngineWhoseRecordWasTakenOverRefusesItsNextWrite(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = UsersTable.empty(database);
        DocumentWriteBack engine = engine(cache, store, true).build()) {
      EntityKey ann = new EntityKey("users", 1);
      engine.write(ann, ChangeSequence.of(insert(Map.of("name", "ann", "score", 1))));
      for (ServerAddress server :
          cache.client.replicaPlacement().store(2).serversFor(EngineClaim.KEY)) {
        CacheValue record = cache.client.servers().getOn(server, EngineClaim.KEY).orElseThrow();
        cache
            .client
            .servers()
            .casOn(
                server,
                EngineClaim.KEY,
                "exclusive another-process".getBytes(StandardCharsets.UTF_8),
                record.cas(),
                WriteOptions.PINNED.withTtl(LIFETIME));
      }
      Thread.sleep(LIFETIME.toMillis()); // past the deadline the last renewal gave

      assertThatThrownBy(() -> engine.write(ann, ChangeSequence.of(inc("score", 1))))
          .hasStackTraceContaining("exclusive claim on the cache tier was lost");
      assertThat(engine.metrics().pendingWrites()).isEqualTo(1);
    }
  }

  /** A replica server of the record lost: the holder renews on the others and keeps writing. */
  @Test
  void aSingleProcessEngineKeepsItsClaimWhenAReplicaServerIsLost(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(3);
        MySqlStore store = UsersTable.empty(database);
        DocumentWriteBack engine = engine(cache, store, true).build()) {
      EntityKey ann = new EntityKey("users", 1);
      engine.write(ann, ChangeSequence.of(insert(Map.of("name", "ann", "score", 1))));
      ServerAddress first =
          cache.client.replicaPlacement().store(2).serversFor(EngineClaim.KEY).get(0);
      cache.lose(cache.client.config().servers().indexOf(first));
      Thread.sleep(LIFETIME.toMillis() + 500); // past the deadline of every renewal before the loss

      engine.write(ann, ChangeSequence.of(inc("score", 41)));
      engine.drainNow();
      assertThat(store.read(ann).orElseThrow().fields()).containsEntry("score", 42);
    }
  }
}
