package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.delete;
import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.server.Credentials;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.DamagedValue;
import io.dendrite.writeback.ForwardingStore;
import io.dendrite.writeback.WriteBackMeters;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.engine.UndecodableValueException;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.store.Entity;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealServers.class)
class WriteBackMySqlIT {
  private static final String USERS = "users";

  @Test
  void acknowledgedWritesDrainToExactlyTheModel(MySqlTestDatabase database) throws Exception {
    createUsers(database);
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache.client)
                .store(store)
                .replicas(2)
                .partitions(4)
                .drainThreads(0)
                .build()) {
      for (int id = 1; id <= 20; id++) {
        EntityKey key = new EntityKey(USERS, id);
        model.write(
            writeBack, key, ChangeSequence.of(insert(Map.of("name", "u" + id, "score", id))));
        model.write(writeBack, key, ChangeSequence.of(inc("score", 10), set("name", "v" + id)));
        model.write(writeBack, key, ChangeSequence.of(inc("score", 5)));
      }
      model.write(writeBack, new EntityKey(USERS, 7), ChangeSequence.of(delete()));

      assertThat(store.read(new EntityKey(USERS, 1)))
          .as("buffered, not yet in the store")
          .isEmpty();
      Thread.sleep(20);
      WriteBackMetrics before = writeBack.metrics();
      assertThat(before.pendingWrites()).isEqualTo(20);
      assertThat(before.pinnedBytes()).isPositive();
      assertThat(before.oldestPendingAge()).isGreaterThanOrEqualTo(Duration.ofMillis(20));

      writeBack.drainNow();

      model.assertStoreMatches(store);
      assertThat(store.read(new EntityKey(USERS, 3)).orElseThrow().fields())
          .containsEntry("score", 18);
      WriteBackMetrics metrics = writeBack.metrics();
      assertThat(metrics.pendingWrites()).isZero();
      assertThat(metrics.drained()).isEqualTo(20);
      assertThat(metrics.drainRatePerSecond()).isPositive();
      assertThat(metrics.oldestPendingAge()).isZero();
      assertThat(metrics.pinnedBytes()).isZero();
      assertThat(metrics.writeThroughFallbacks()).isZero();
    }
  }

  @Test
  void closeDrainsWhatIsBufferedOrHandsItOverToTheNextEngine(MySqlTestDatabase database)
      throws Exception {
    createUsers(database);
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database)) {
      try (DocumentWriteBack handsOver =
          DocumentWriteBack.builder()
              .cache(cache.client)
              .store(store)
              .replicas(2)
              .drainThreads(0)
              .drainOnClose(Duration.ZERO)
              .build()) {
        for (int id = 1; id <= 10; id++) {
          model.write(
              handsOver,
              new EntityKey(USERS, id),
              ChangeSequence.of(insert(Map.of("name", "u" + id, "score", id))));
        }
      }
      assertThat(store.read(new EntityKey(USERS, 1))).as("handed over, not drained").isEmpty();

      try (DocumentWriteBack drainsOnClose =
          DocumentWriteBack.builder()
              .cache(cache.client)
              .store(store)
              .replicas(2)
              .drainThreads(0)
              .build()) {
        assertThat(drainsOnClose.metrics().pendingWrites())
            .as("what the first engine handed over")
            .isEqualTo(10);
        for (int id = 11; id <= 20; id++) {
          model.write(
              drainsOnClose,
              new EntityKey(USERS, id),
              ChangeSequence.of(insert(Map.of("name", "u" + id, "score", id))));
        }
      }
      model.assertStoreMatches(store);
      try (DocumentWriteBack after =
          DocumentWriteBack.builder()
              .cache(cache.client)
              .store(store)
              .replicas(2)
              .drainThreads(0)
              .build()) {
        assertThat(after.metrics().pendingWrites()).isZero();
      }
    }
  }

  @Test
  void readAppliesTheBufferedWriteFirst(MySqlTestDatabase database) throws SQLException {
    createUsers(database);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .build()) {
      EntityKey ann = new EntityKey(USERS, 1);
      writeBack.write(ann, ChangeSequence.of(insert(Map.of("name", "ann", "score", 1))));
      writeBack.drainNow();
      writeBack.write(ann, ChangeSequence.of(inc("score", 41)));
      assertThat(store.read(ann).orElseThrow().fields())
          .as("still buffered")
          .containsEntry("score", 1);

      assertThat(writeBack.read(ann).map(Entity::fields))
          .contains(Map.of("name", "ann", "score", 42));
      assertThat(writeBack.metrics().pendingWrites()).isZero();
      writeBack.drainNow();
      assertThat(store.read(ann).orElseThrow().fields())
          .as("applied once")
          .containsEntry("score", 42);
    }
  }

  /**
   * With a drain delay, the changes a document gets within the delay reach the store as one drained buffered write;
   * a read meanwhile still sees them all (it applies the buffered write first). Without the delay the drain threads
   * (50 ms idle pause) would have applied the first write long before the check at one second.
   */
  @Test
  void aDrainDelayMergesTheChangesOfADocumentIntoOneDrainedWrite(MySqlTestDatabase database)
      throws Exception {
    createUsers(database);
    Duration delay = Duration.ofSeconds(4);
    List<Integer> documentsApplied = new CopyOnWriteArrayList<>();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore mysql = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .drainThreads(1)
                .drainDelay(delay)
                .store(
                    new ForwardingStore(mysql) {
                      @Override
                      public void apply(List<EntityChanges> batch) {
                        documentsApplied.add(batch.size());
                        super.apply(batch);
                      }
                    })
                .build()) {
      EntityKey ann = new EntityKey(USERS, 1);
      EntityKey bob = new EntityKey(USERS, 2);
      long started = System.nanoTime();
      writeBack.write(ann, ChangeSequence.of(insert(Map.of("name", "ann", "score", 0))));
      writeBack.write(bob, ChangeSequence.of(insert(Map.of("name", "bob", "score", 0))));
      for (int i = 1; i <= 10; i++) {
        writeBack.write(ann, ChangeSequence.of(inc("score", i)));
        writeBack.write(bob, ChangeSequence.of(inc("score", 1)));
      }
      Duration writing = Duration.ofNanos(System.nanoTime() - started);
      assertThat(writing)
          .as("the writes took less than the delay, so the test can tell")
          .isLessThan(delay);

      Thread.sleep(1_000);
      assertThat(mysql.read(ann)).as("not drained within the delay").isEmpty();
      assertThat(writeBack.read(bob).map(Entity::fields))
          .as("a read applies what is buffered first")
          .contains(Map.of("name", "bob", "score", 10));

      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (mysql.read(ann).isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(mysql.read(ann).orElseThrow().fields()).containsEntry("score", 55);
      assertThat(writeBack.metrics().drained())
          .as("bob by the read, ann by one drain of all its changes")
          .isEqualTo(2);
      assertThat(documentsApplied).containsExactly(1, 1);
    }
  }

  /**
   * A drain removes the listings of every partition its batch touched in one round trip, not one per partition:
   * 64 documents over 16 partitions drain in a handful of awaited round trips (the listings' read, the buffered
   * writes' read and delete, the removals), where one removal after another would take at least 16.
   */
  @Test
  void aDrainRemovesItsListingsFromEveryPartitionInOneRoundTrip(MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .partitions(16)
                .singleProcess(true)
                .build()) {
      for (int id = 1; id <= 64; id++) {
        model.write(
            writeBack,
            new EntityKey(USERS, id),
            ChangeSequence.of(insert(Map.of("name", "u" + id, "score", id))));
      }
      long before = cache.client.threadCounters().roundTrips();
      writeBack.drainNow();
      long awaited = cache.client.threadCounters().roundTrips() - before;
      assertThat(awaited)
          .as("round trips awaited by a drain of 64 documents over 16 partitions")
          .isLessThan(16);
      model.assertStoreMatches(store);
      assertThat(writeBack.metrics().pendingWrites()).isZero();
    }
  }

  @Test
  void overThePinnedBudgetWritesFallBackToWriteThroughInOrder(MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .pinnedBudgetBytes(400)
                .build()) {
      for (int round = 0; round < 10; round++) {
        for (int id = 1; id <= 8; id++) {
          EntityKey key = new EntityKey(USERS, id);
          model.write(
              writeBack,
              key,
              round == 0
                  ? ChangeSequence.of(insert(Map.of("name", "u" + id, "score", 0)))
                  : ChangeSequence.of(inc("score", round), set("name", "r" + round)));
        }
      }

      WriteBackMetrics metrics = writeBack.metrics();
      assertThat(metrics.writeThroughFallbacks()).isPositive();
      assertThat(metrics.pinnedBytes()).isLessThanOrEqualTo(400);
      writeBack.drainNow();
      model.assertStoreMatches(store);
      assertThat(store.read(new EntityKey(USERS, 1)).orElseThrow().fields())
          .containsEntry("score", 45);
    }
  }

  @Test
  void storeOutagesAreRetriedAndNoIncrementIsAppliedTwice(MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        FlakyStore store = new FlakyStore(open(database));
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                // Long enough that three failures, their backoff and one real apply fit on a loaded
                // machine.
                .storeRetryDeadline(Duration.ofSeconds(3))
                .build()) {
      for (int id = 1; id <= 5; id++) {
        EntityKey key = new EntityKey(USERS, id);
        model.write(
            writeBack, key, ChangeSequence.of(insert(Map.of("name", "u" + id, "score", 100))));
      }
      writeBack.drainNow();
      for (int id = 1; id <= 5; id++) {
        model.write(
            writeBack,
            new EntityKey(USERS, id),
            ChangeSequence.of(inc("score", 7), inc("score", id)));
      }

      store.failNextApplies(1_000);
      assertThatThrownBy(writeBack::drainNow).isInstanceOf(DataStoreUnavailableException.class);
      assertThat(writeBack.metrics().pendingWrites()).as("nothing dropped").isEqualTo(5);

      store.failNextApplies(3);
      writeBack.drainNow();

      model.assertStoreMatches(store);
      assertThat(store.read(new EntityKey(USERS, 2)).orElseThrow().fields())
          .containsEntry("score", 109);
      WriteBackMetrics metrics = writeBack.metrics();
      assertThat(metrics.storeRetries()).isGreaterThanOrEqualTo(4);
      assertThat(metrics.pendingWrites()).isZero();
    }
  }

  @Test
  void concurrentWritersReadersAndDrainThreadsCountEveryIncrementOnce(MySqlTestDatabase database)
      throws Exception {
    createUsers(database);
    int writers = 4;
    int incrementsPerWriter = 40;
    int documents = 3;
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache.client)
                .store(store)
                .replicas(2)
                .partitions(4)
                .drainThreads(2)
                .idlePause(Duration.ofMillis(1))
                .build()) {
      for (int id = 1; id <= documents; id++) {
        writeBack.write(
            new EntityKey(USERS, id),
            ChangeSequence.of(insert(Map.of("name", "u" + id, "score", 0))));
      }
      ExecutorService pool = Executors.newFixedThreadPool(writers);
      List<Future<?>> done = new ArrayList<>();
      for (int writer = 0; writer < writers; writer++) {
        int seed = writer;
        done.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < incrementsPerWriter; i++) {
                    EntityKey key = new EntityKey(USERS, 1 + (seed + i) % documents);
                    writeBack.write(key, ChangeSequence.of(inc("score", 1)));
                    if (i % 10 == 0) {
                      assertThat(writeBack.read(key)).isPresent();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> writer : done) {
        writer.get(60, TimeUnit.SECONDS);
      }
      pool.shutdown();
      writeBack.drainNow();

      int total = 0;
      for (int id = 1; id <= documents; id++) {
        total += (Integer) store.read(new EntityKey(USERS, id)).orElseThrow().fields().get("score");
      }
      assertThat(total).isEqualTo(writers * incrementsPerWriter);
      assertThat(writeBack.metrics().pendingWrites()).isZero();
    }
  }

  /**
   * A listing's partition is its key's hash modulo the partition count, so an engine with another count than the one
   * that listed the buffered writes could neither find the listings it drains (it never finishes) nor see partitions
   * above its own count (writes never drained). It is refused; one with the recorded count drains everything. The
   * count is recorded on each replica server, so neither needs the server that went away.
   */
  @Test
  void anEngineWithAnotherPartitionCountIsRefusedAndOneWithTheSameCountDrainsEverything(
      MySqlTestDatabase database) throws SQLException {
    createUsers(database);
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database)) {
      try (DocumentWriteBack first = engine(cache, store, 4)) {
        for (int id = 1; id <= 40; id++) {
          EntityKey key = new EntityKey(USERS, id);
          model.write(first, key, ChangeSequence.of(insert(Map.of("name", "u" + id, "score", id))));
        }
      } // closes without draining: every write stays buffered and listed in 4 partitions
      // The server the count's record is placed on first goes away: the record's other replica
      // still refuses, and an engine still starts (as its writes do) with one cache server down.
      cache.lose(cache.serverOf("PendingWrites:partitions"));

      assertThatThrownBy(() -> engine(cache, store, 64))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("buffered writes in 4 partitions")
          .hasMessageContaining("built with 64");
      assertThatThrownBy(() -> engine(cache, store, 2))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("built with 2");

      try (DocumentWriteBack second = engine(cache, store, 4)) {
        second.drainNow();
        model.assertStoreMatches(store);
        assertThat(second.metrics().pendingWrites()).isZero();
        assertThat(second.metrics().drained()).isEqualTo(40);
      }
    }
  }

  private static DocumentWriteBack engine(
      EmbeddedIqServers cache, MySqlStore store, int partitions) {
    return DocumentWriteBack.builder()
        .cache(cache.client)
        .store(store)
        .replicas(2)
        .partitions(partitions)
        .drainThreads(0)
        .drainOnClose(Duration.ZERO)
        .build();
  }

  @Test
  void aLostCacheServerDoesNotLoseReplicatedWrites(MySqlTestDatabase database) throws SQLException {
    createUsers(database);
    DocumentModel model = new DocumentModel();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(3);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache.client)
                .store(store)
                .replicas(3)
                .drainThreads(0)
                .build()) {
      for (int id = 1; id <= 30; id++) {
        EntityKey key = new EntityKey(USERS, id);
        model.write(
            writeBack, key, ChangeSequence.of(insert(Map.of("name", "u" + id, "score", id))));
        model.write(writeBack, key, ChangeSequence.of(inc("score", 1000)));
      }

      cache.lose(0);
      writeBack.drainNow();

      model.assertStoreMatches(store);
      assertThat(writeBack.metrics().pendingWrites()).isZero();
      assertThat(writeBack.metrics().drained()).isEqualTo(30);
    }
  }

  @Test
  void anUndecodableBufferedWriteIsMovedAsideAndTheWritesBehindItStillDrain(
      MySqlTestDatabase database) throws Exception {
    createUsers(database);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache.client)
                .store(store)
                .replicas(2)
                .partitions(1)
                .drainThreads(0)
                .build()) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      WriteBackMeters.of(writeBack).bindTo(registry);
      for (int id = 1; id <= 3; id++) {
        writeBack.write(
            new EntityKey(USERS, id),
            ChangeSequence.of(insert(Map.of("name", "u" + id, "score", id))));
      }
      EntityKey damaged = new EntityKey(USERS, 2);
      String damagedKey = BufferedWriteKey.of(damaged);
      DamagedValue damagedValue = DamagedValue.plant(cache.client, 2, damagedKey);

      assertThatThrownBy(() -> writeBack.read(damaged))
          .as("a read cannot apply it, so it must not serve the row without it")
          .isInstanceOf(UndecodableValueException.class)
          .hasMessageContaining(damagedKey);
      assertThatThrownBy(() -> writeBack.write(damaged, ChangeSequence.of(inc("score", 1))))
          .isInstanceOf(UndecodableValueException.class)
          .hasMessageContaining(damagedKey);
      writeBack.write(new EntityKey(USERS, 3), ChangeSequence.of(inc("score", 30)));
      writeBack.write(
          new EntityKey(USERS, 4), ChangeSequence.of(insert(Map.of("name", "u4", "score", 4))));

      writeBack.drainNow();

      assertThat(store.read(new EntityKey(USERS, 1)).map(Entity::fields))
          .contains(Map.of("name", "u1", "score", 1));
      assertThat(store.read(new EntityKey(USERS, 3)).map(Entity::fields))
          .contains(Map.of("name", "u3", "score", 33));
      assertThat(store.read(new EntityKey(USERS, 4)).map(Entity::fields))
          .contains(Map.of("name", "u4", "score", 4));
      assertThat(store.read(damaged)).isEmpty();
      WriteBackMetrics metrics = writeBack.metrics();
      damagedValue.assertMovedAsideOnce(metrics, registry);
      assertThat(metrics.pendingWrites()).isZero();
      assertThat(metrics.drained()).isEqualTo(3);

      writeBack.write(
          damaged, ChangeSequence.of(insert(Map.of("name", "u2", "score", 2)), inc("score", 1)));
      assertThat(writeBack.read(damaged).map(Entity::fields))
          .as("the document is written and read again once its damaged value is aside")
          .contains(Map.of("name", "u2", "score", 3));
      assertThat(writeBack.metrics().undecodableMovedAside()).isEqualTo(1);
    }
  }

  /**
   * With a login and {@code --pin-users}, write-back's buffered writes (pinned) are the application user's: another
   * user of the same cache tier can neither delete nor unpin them, and the application's drain still applies them.
   */
  @Test
  void anotherUserCannotDeleteOrUnpinBufferedWritesAndTheyStillDrain(MySqlTestDatabase database)
      throws SQLException {
    createUsers(database);
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder()
                .count(2)
                .server(
                    server ->
                        server
                            .credentials(Credentials.of(Map.of("app", "s3cret", "ops", "0ps")))
                            .pinUsers(Set.of("app")))
                .client(client -> client.login("app", "s3cret"))
                .start();
        IqClient ops =
            IqClient.builder()
                .servers(cache.client.config().servers())
                .login("ops", "0ps")
                .build();
        MySqlStore store = open(database);
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .build()) {
      EntityKey ann = new EntityKey(USERS, 1);
      writeBack.write(ann, ChangeSequence.of(insert(Map.of("name", "ann", "score", 1))));
      writeBack.write(ann, ChangeSequence.of(inc("score", 41)));
      String buffered = BufferedWriteKey.of(ann);
      assertThat(ops.get(buffered)).as("other users may read it").isPresent();

      assertThatThrownBy(() -> ops.delete(buffered))
          .isInstanceOf(IqException.class)
          .hasMessageContaining("user ops may not change reserved key " + buffered);
      assertThatThrownBy(() -> ops.unpin(buffered))
          .hasMessageContaining("user ops may not change reserved key " + buffered);
      assertThatThrownBy(() -> ops.set(buffered, new byte[] {1}))
          .hasMessageContaining("user ops may not change reserved key " + buffered);

      writeBack.drainNow();
      assertThat(store.read(ann).orElseThrow().fields()).containsEntry("score", 42);
      assertThat(writeBack.metrics().pendingWrites()).isZero();
    }
  }

  private static void createUsers(MySqlTestDatabase database) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
    }
  }

  private static MySqlStore open(MySqlTestDatabase database) {
    return MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
  }
}
