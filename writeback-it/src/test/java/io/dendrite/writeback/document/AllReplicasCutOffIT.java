package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.inc;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every replica server of some buffered writes cut off by the network for a few seconds, then back as the same
 * runs (not restarted). While they are cut off, drains find no copy of those buffered writes; once they are back,
 * the repair takes them out of replica placement (their copies could be older than others), so drains find no copy
 * at the new placement either. Those copies are the only ones, and the writes were acknowledged: no drain may take
 * their absence for "already drained", and the writes must reach the database once the servers answer again.
 */
@ExtendWith(RealServers.class)
class AllReplicasCutOffIT {
  private static final int DOCUMENTS = 40;
  private static final int REPLICAS = 2;
  private static final Duration CUT = Duration.ofSeconds(3);
  private static final Duration LIMIT = Duration.ofSeconds(30);

  @Test
  void writesWhoseEveryReplicaWasCutOffBrieflyReachTheDatabaseOnceTheServersAnswerAgain(
      MySqlTestDatabase database) throws Exception {
    DocumentModel model = new DocumentModel();
    List<EntityKey> documents = UsersTable.documents(DOCUMENTS);
    MySqlStore store = UsersTable.seeded(database, documents, model);
    try (EmbeddedIqServers tier =
            EmbeddedIqServers.builder()
                .count(3)
                .leaseLifetime(Duration.ofMillis(3_000))
                .behindProxies()
                .client(
                    client ->
                        client
                            .connectTimeout(Duration.ofSeconds(1))
                            .requestTimeout(Duration.ofSeconds(2)))
                .start();
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(tier.client)
                .store(store)
                .replicas(REPLICAS)
                .partitions(4)
                .drainThreads(0)
                .replicaCheckInterval(Duration.ofMillis(100))
                .replaceDownServerAfter(Duration.ofDays(1))
                .build()) {
      IqClient cache = tier.client;
      Set<ServerAddress> cutOff =
          Set.of(cache.config().servers().get(0), cache.config().servers().get(1));
      assertThat(
              documents.stream()
                  .filter(
                      key ->
                          cutOff.containsAll(
                              cache
                                  .replicaPlacement()
                                  .serversFor(BufferedWriteKey.of(key), REPLICAS))))
          .as("documents whose every replica is on the servers that will be cut off")
          .isNotEmpty();
      for (int round = 0; round < 2; round++) {
        for (EntityKey key : documents) {
          model.write(writeBack, key, ChangeSequence.of(inc("score", 1)));
        }
      }
      assertThat(writeBack.metrics().pendingWrites()).as("buffered before the cut").isPositive();

      tier.proxies.get(0).cut();
      tier.proxies.get(1).cut();
      long cutEnds = System.nanoTime() + CUT.toNanos();
      while (System.nanoTime() < cutEnds) {
        drainIgnoringFailures(writeBack); // finds no copy of the cut-off writes
        Thread.sleep(200);
      }
      tier.proxies.get(0).restore();
      tier.proxies.get(1).restore();

      long deadline = System.nanoTime() + LIMIT.toNanos();
      while (!cache.replicaPlacement().excluded().containsAll(cutOff)
          && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(cache.replicaPlacement().excluded())
          .as("both back as the same runs: out of placement within %s", LIMIT)
          .containsAll(cutOff);
      while (System.nanoTime() < deadline) {
        drainIgnoringFailures(writeBack);
        if (writeBack.metrics().pendingWrites() == 0
            && UsersTable.mismatches(store, model, documents).isEmpty()) {
          break;
        }
        Thread.sleep(200);
      }
      int lost = 0;
      int doubled = 0;
      for (EntityKey key : documents) {
        int expected = score(model.expected(key).orElseThrow().get("score"));
        int stored = score(store.read(key).map(Entity::fields).orElseThrow().get("score"));
        lost += stored < expected ? 1 : 0;
        doubled += stored > expected ? 1 : 0;
      }
      assertThat(lost).as("documents missing acknowledged increments").isZero();
      assertThat(doubled).as("documents with increments applied twice").isZero();
      assertThat(UsersTable.mismatches(store, model, documents)).isEmpty();
      assertThat(writeBack.metrics().pendingWrites()).isZero();
    }
  }

  private static void drainIgnoringFailures(DocumentWriteBack writeBack) {
    try {
      writeBack.drainNow();
    } catch (RuntimeException unreachable) {
      // a drain that meets an unreachable replica may fail; what it did not drain stays buffered
    }
  }

  private static int score(Object value) {
    return ((Number) value).intValue();
  }
}
