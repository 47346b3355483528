package io.dendrite.writeback.session;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.IqServerProcess;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.PinnedReplicas;
import io.dendrite.writeback.store.Entity;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A session applier whose change to its queue reaches the cache server after its lease ran out (a long pause, a
 * packet stuck on the way) must not overwrite the queue a later committer changed meanwhile: that would drop the
 * committer's acknowledged session from the queue, so that no drain and no read ever applies it.
 *
 * <p>The applier talks to the server through a {@link CuttableProxy} that holds its first request changing the
 * queue key for twice the server's lease lifetime; a second engine commits a session in that window. Before the
 * queues were changed under server-fenced leases (the old lock key checked its lease and then set the queue),
 * the late change deleted the queue with the committed session in it, and the row ended one increment short.
 */
@ExtendWith(RealServers.class)
class StalledSessionApplierIT {
  private static final long LEASE_MILLIS = 1_000;
  private static final EntityKey ROW = new EntityKey("users", 1);
  private static final String QUEUE = "0";

  private IqServerProcess server;

  @AfterEach
  void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void aQueueChangeThatArrivesAfterTheApplierLostItsLeaseDropsNoCommittedSession(
      MySqlTestDatabase database) throws Exception {
    server = IqServerProcess.start(LEASE_MILLIS);
    try (MySqlStore store = seededStore(database);
        CuttableProxy proxy = new CuttableProxy(server.address().port());
        IqClient applierCache = client(new ServerAddress("127.0.0.1", proxy.port()));
        IqClient committerCache = client(server.address());
        SessionWriteBack applier = engine(applierCache, store);
        SessionWriteBack committer = engine(committerCache, store)) {
      committer.commit(QUEUE, List.of(increment()));

      CuttableProxy.Hold hold = proxy.holdFrom(StalledSessionApplierIT::changesAQueue);
      CompletableFuture<Void> drain = CompletableFuture.runAsync(applier::drainNow);
      assertThat(hold.awaitHeld(Duration.ofSeconds(30)))
          .as("the applier reached its queue change")
          .isTrue();
      Thread.sleep(2 * LEASE_MILLIS); // the applier's lease runs out while its change is on the way
      committer.commit(QUEUE, List.of(increment())); // acknowledged
      hold.release();
      drain.get(60, TimeUnit.SECONDS);
      committer.drainNow();

      assertThat(score(store)).as("both acknowledged increments reached the database").isEqualTo(2);
      assertThat(committer.read(ROW).map(Entity::fields).map(fields -> fields.get("score")))
          .contains(2);
      assertThat(committer.metrics().pendingWrites()).isZero();
    }
  }

  /**
   * The negative control: the same late change made the way it was made before the fix, a plain set of the queue
   * as the applier last read it, does drop the committed session, and the check sees it.
   */
  @Test
  void withoutFencingTheCheckCatchesTheDroppedSession(MySqlTestDatabase database) throws Exception {
    server = IqServerProcess.start(LEASE_MILLIS);
    try (MySqlStore store = seededStore(database);
        IqClient cache = client(server.address());
        SessionWriteBack committer = engine(cache, store)) {
      PinnedReplicas replicas = new PinnedReplicas(cache, 1);
      String queueKey = "SessionQueue:" + QUEUE;
      committer.commit(QUEUE, List.of(increment()));
      byte[] asTheApplierReadIt = replicas.get(queueKey).orElseThrow();
      store.applyOnce(
          new String(asTheApplierReadIt, StandardCharsets.UTF_8).split(" ")[0],
          List.of(increment()));
      committer.commit(QUEUE, List.of(increment()));
      replicas.delete(queueKey); // the applier's unfenced "the queue is now empty"
      committer.drainNow();

      assertThat(score(store)).as("the second session was dropped").isEqualTo(1);
    }
  }

  /** A request that changes a session queue: a set, delete or swap whose key is {@code SessionQueue:...}. */
  private static boolean changesAQueue(String line) {
    String[] words = line.split(" ");
    return words.length > 1
        && Set.of("set", "delete", "swap", "sar", "cas").contains(words[0])
        && words[1].startsWith("SessionQueue:");
  }

  private static EntityChanges increment() {
    return new EntityChanges(ROW, ChangeSequence.of(inc("score", 1)));
  }

  private static int score(MySqlStore store) {
    Optional<Object> score = store.read(ROW).map(Entity::fields).map(fields -> fields.get("score"));
    return ((Number) score.orElseThrow()).intValue();
  }

  private static SessionWriteBack engine(IqClient cache, MySqlStore store) {
    return SessionWriteBack.builder().replicas(1).cache(cache).store(store).drainThreads(0).build();
  }

  private static IqClient client(ServerAddress address) {
    return IqClient.builder()
        .servers(List.of(address))
        .connectTimeout(Duration.ofSeconds(1))
        .requestTimeout(Duration.ofSeconds(10))
        .build();
  }

  private static MySqlStore seededStore(MySqlTestDatabase database) throws Exception {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
    }
    MySqlStore store = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
    store.apply(
        List.of(
            new EntityChanges(ROW, ChangeSequence.of(insert(Map.of("name", "u1", "score", 0))))));
    return store;
  }
}
