package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqException;
import io.dendrite.iq.server.IqServer;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A cache server stopped on purpose hands over first ({@code IqServer.leave}, SIGTERM in {@code IqServerMain}): its
 * clients take it out of replica placement and copy what it shares with the others to the next servers, so that the
 * loss of one more server afterwards loses nothing. Three embedded servers, R = 2, nothing drained until the end, so
 * only the handover's copies can save a buffered write whose two replicas were the leaving server and the one lost
 * after it.
 */
@ExtendWith(RealServers.class)
class HandoverIT {
  private static final int DOCUMENTS = 40;
  private static final int REPLICAS = 2;

  /**
   * A client that looks at the servers' runs seldom (every 30 s, far longer than the handover): the server must not
   * stop before that client has copied its replicas, or a second loss takes acknowledged writes.
   */
  @Test
  void aClientThatLooksSeldomStillCopiesItsReplicasBeforeTheLeavingServerStops(
      MySqlTestDatabase database) throws Exception {
    DocumentModel model = new DocumentModel();
    MySqlStore store = UsersTable.seeded(database, documents(), model);
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(3).leaseLifetime(Duration.ofSeconds(3)).start();
        DocumentWriteBack writeBack = engine(cache, store, Duration.ofSeconds(30))) {
      for (EntityKey key : documents()) {
        model.write(writeBack, key, ChangeSequence.of(inc("score", 1), set("name", "h")));
      }
      cache.servers.get(0).leave(Duration.ofSeconds(5));
      cache.lose(0);
      cache.lose(1);
      drainKeepingWritesWithNoServerLeft(writeBack);
      assertThat(UsersTable.mismatches(store, model, documents()))
          .as("acknowledged writes lost after the handover and a second loss")
          .isEmpty();
    }
  }

  /**
   * The engine's repair confirms its copies ({@code pmoved}) after its pass: the server returns from {@code leave}
   * with every client confirmed, long before its deadline (a leave that waited for the deadline would report the
   * client unconfirmed), and the loss of another server afterwards loses nothing.
   */
  @Test
  void leaveReturnsOnceTheEngineConfirmedItsCopiesAndASecondLossLosesNothing(
      MySqlTestDatabase database) throws Exception {
    DocumentModel model = new DocumentModel();
    MySqlStore store = UsersTable.seeded(database, documents(), model);
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(3).leaseLifetime(Duration.ofSeconds(3)).start();
        DocumentWriteBack writeBack = engine(cache, store, Duration.ofSeconds(1))) {
      for (EntityKey key : documents()) {
        model.write(writeBack, key, ChangeSequence.of(inc("score", 1), set("name", "a")));
      }
      IqServer.HandoverReport report = cache.servers.get(0).leave(Duration.ofSeconds(120));
      assertThat(report.complete()).as(report.toString()).isTrue();
      assertThat(report.confirmed()).as(report.toString()).isPositive();
      assertThat(report.pinnedItems()).isPositive();
      assertThat(cache.client.servers().stats(cache.client.config().servers().get(0)))
          .containsEntry("leaving", "1")
          .containsEntry("handover_unconfirmed", "0");
      cache.lose(0);
      cache.lose(1);
      drainKeepingWritesWithNoServerLeft(writeBack);
      assertThat(UsersTable.mismatches(store, model, documents())).isEmpty();
    }
  }

  /**
   * An engine whose repair never looks ({@code replicaCheckInterval} zero) never confirms: the server waits until
   * its deadline and reports the client and the pinned items it holds as unconfirmed.
   */
  @Test
  void aClientThatNeverRepairsLeavesTheHandoverIncompleteAtTheDeadline(MySqlTestDatabase database)
      throws Exception {
    DocumentModel model = new DocumentModel();
    MySqlStore store = UsersTable.seeded(database, documents(), model);
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(3).leaseLifetime(Duration.ofSeconds(3)).start();
        DocumentWriteBack writeBack = engine(cache, store, Duration.ZERO)) {
      for (EntityKey key : documents()) {
        model.write(writeBack, key, ChangeSequence.of(inc("score", 1), set("name", "b")));
      }
      IqServer.HandoverReport report = cache.servers.get(0).leave(Duration.ofSeconds(2));
      assertThat(report.complete()).isFalse();
      assertThat(report.unconfirmed()).isPositive();
      assertThat(report.confirmed()).isZero();
      assertThat(report.unconfirmedPinnedItems()).isEqualTo(report.pinnedItems()).isPositive();
    }
  }

  private static DocumentWriteBack engine(
      EmbeddedIqServers cache, MySqlStore store, Duration replicaCheckInterval) {
    return DocumentWriteBack.builder()
        .cache(cache.client)
        .store(store)
        .replicas(REPLICAS)
        .partitions(4)
        .drainThreads(0)
        .replicaCheckInterval(replicaCheckInterval)
        // Never replaced for being down: only the handover can move the copies before the second
        // loss.
        .replaceDownServerAfter(Duration.ofDays(1))
        .build();
  }

  /** {@link DocumentWriteBack#drainNow}, which keeps listed (and says so) what no server holds any more. */
  private static void drainKeepingWritesWithNoServerLeft(DocumentWriteBack writeBack) {
    try {
      writeBack.drainNow();
    } catch (IqException noServerAnswered) {
      assertThat(noServerAnswered).hasMessageContaining("stay listed");
    }
  }

  private static List<EntityKey> documents() {
    return UsersTable.documents(DOCUMENTS);
  }
}
