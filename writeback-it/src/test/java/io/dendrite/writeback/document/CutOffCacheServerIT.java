package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A cache server cut off by the network, not restarted: connections to it are dropped and refused for a while
 * (a {@link CuttableProxy} in front of it), so writers take it for down and leave its replicas out of their
 * changes, and then it answers again as the same run, with the copies it had before the cut. Those copies are older
 * than the others; the first replica in ring order wins a read, so a drain would apply an older buffered write over
 * the newer one. The repair must take such a server out of replica placement before anything reads it again.
 */
@ExtendWith(RealServers.class)
class CutOffCacheServerIT {
  private static final int DOCUMENTS = 40;
  private static final int REPLICAS = 2;
  private static final Duration LIMIT = Duration.ofSeconds(30);

  @Test
  void aServerThatAnswersAgainWithTheCopiesItHadBeforeTheCutIsNeverReadAgain(
      MySqlTestDatabase database) throws Exception {
    List<String> mismatches = writeCutWriteHealThenDrain(database, Duration.ofMillis(100));
    assertThat(mismatches).isEmpty();
  }

  /** Negative control: with the repair off the older copies are read after the cut, and the check says so. */
  @Test
  void withoutTheRepairTheCheckCatchesTheOlderCopiesApplied(MySqlTestDatabase database)
      throws Exception {
    List<String> mismatches = writeCutWriteHealThenDrain(database, Duration.ZERO);
    assertThat(mismatches).isNotEmpty();
  }

  private List<String> writeCutWriteHealThenDrain(
      MySqlTestDatabase database, Duration replicaCheckInterval) throws Exception {
    DocumentModel model = new DocumentModel();
    MySqlStore store = UsersTable.seeded(database, documents(), model);
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
                .replicaCheckInterval(replicaCheckInterval)
                .replaceDownServerAfter(Duration.ofDays(1))
                .build()) {
      IqClient cache = tier.client;
      CuttableProxy proxy = tier.proxies.get(0);
      ServerAddress cutOff = cache.config().servers().get(0);
      assertThat(
              documents().stream()
                  .filter(
                      key ->
                          cache
                              .replicaPlacement()
                              .serversFor(BufferedWriteKey.of(key), REPLICAS)
                              .get(0)
                              .equals(cutOff)))
          .as("documents whose first replica is on the server that will be cut off")
          .isNotEmpty();
      writeRound(writeBack, model, 0);

      proxy.cut();
      writeRound(writeBack, model, 1); // on the other replicas only: the cut-off server is down
      proxy.restore();

      if (!replicaCheckInterval.isZero()) {
        long deadline = System.nanoTime() + LIMIT.toNanos();
        while (!cache.replicaPlacement().excluded().contains(cutOff)
            && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        assertThat(cache.replicaPlacement().excluded())
            .as("out of placement within %s", LIMIT)
            .containsExactly(cutOff);
      }
      writeBack.drainNow();
      assertThat(writeBack.metrics().pendingWrites()).isZero();
      return UsersTable.mismatches(store, model, documents());
    }
  }

  private static void writeRound(DocumentWriteBack writeBack, DocumentModel model, int round) {
    for (EntityKey key : documents()) {
      model.write(writeBack, key, ChangeSequence.of(inc("score", 1), set("name", "r" + round)));
    }
  }

  private static List<EntityKey> documents() {
    return UsersTable.documents(DOCUMENTS);
  }
}
