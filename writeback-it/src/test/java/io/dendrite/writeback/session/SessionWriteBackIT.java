package io.dendrite.writeback.session;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.push;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreException;
import io.dendrite.iq.client.IqClient;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.DamagedValue;
import io.dendrite.writeback.WriteBackMeters;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.engine.UndecodableValueException;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.dendrite.writeback.store.Entity;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealServers.class)
class SessionWriteBackIT {
  private static final String ACCOUNTS = "accounts";

  @Test
  void sessionsApplyInCommitOrderSoForeignKeysHold(MySqlTestDatabase database) throws SQLException {
    createParentsAndChildren(database);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        SessionWriteBack sessions =
            SessionWriteBack.builder()
                .cache(cache.client)
                .store(store)
                .replicas(2)
                .drainThreads(0)
                .build()) {
      sessions.commit("0", List.of(row("parents", 1, insert(Map.of("name", "p1")))));
      List<EntityChanges> child = List.of(row("children", 10, insert(Map.of("parent_id", 1))));
      sessions.commit("0", child);
      sessions.commit(
          "0",
          List.of(
              row("parents", 2, insert(Map.of("name", "p2"))),
              row("children", 20, insert(Map.of("parent_id", 2))),
              row("parents", 1, set("name", "p1b"))));

      // Negative control: the database does enforce the key, so applying the child before its
      // parent fails.
      assertThatThrownBy(() -> store.applyOnce("control-child-first", child))
          .isInstanceOf(DataStoreException.class)
          .hasMessageContaining("foreign key");

      // Reading the child applies the parent's session too, because it was queued before the
      // child's.
      assertThat(sessions.read(new EntityKey("children", 10)).map(Entity::fields))
          .contains(Map.of("parent_id", 1));
      assertThat(store.read(new EntityKey("parents", 1)))
          .as("applied before the child")
          .isPresent();
      assertThat(sessions.metrics().pendingWrites())
          .as("the later session still waits")
          .isEqualTo(1);

      sessions.drainNow();

      assertThat(store.read(new EntityKey("children", 20)).map(Entity::fields))
          .contains(Map.of("parent_id", 2));
      assertThat(store.read(new EntityKey("parents", 1)).map(Entity::fields))
          .contains(Map.of("name", "p1b"));
      assertThat(sessions.metrics().pendingWrites()).isZero();
      assertThat(sessions.metrics().drained()).isEqualTo(3);
    }
  }

  /**
   * Every session engine of a cache tier must keep sessions where the others look for them: one that starts with
   * another replica count or other queues than the engines running is refused, naming both layouts; the same layout
   * (queues in any order) joins them.
   */
  @Test
  void anEngineWithAnotherLayoutThanTheRunningOnesIsRefused(MySqlTestDatabase database)
      throws Exception {
    createAccounts(database);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        IqClient otherClient = cache.anotherClient();
        MySqlStore store = open(database);
        SessionWriteBack running = engine(cache.client, store, 2, "a", "b").build()) {
      assertThatThrownBy(() -> engine(otherClient, store, 1, "a", "b").build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("run with replicas 2, queues 'a', 'b'")
          .hasMessageContaining("asked for replicas 1, queues 'a', 'b'");
      assertThatThrownBy(() -> engine(otherClient, store, 2, "a").build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("asked for replicas 2, queues 'a':");
      try (SessionWriteBack joined = engine(otherClient, store, 2, "b", "a").build()) {
        assertThat(joined.queues()).containsExactly("b", "a");
      }
    }
  }

  /** An engine over {@code cache} and {@code store} with {@code replicas} and {@code queues}. */
  private static SessionWriteBack.Builder engine(
      IqClient cache, MySqlStore store, int replicas, String... queues) {
    return SessionWriteBack.builder().cache(cache).store(store).replicas(replicas).queues(queues);
  }

  @Test
  void concurrentTransfersKeepTheSumAndEveryAccountMatchesTheModel(MySqlTestDatabase database)
      throws Exception {
    createAccounts(database);
    int committers = 4;
    int transfersPerCommitter = 30;
    int accountsPerQueue = 4;
    List<String> queues = List.of("a", "b");
    AtomicLongArray expected = new AtomicLongArray(1 + accountsPerQueue * queues.size());
    // Two engines with clients of their own, as two application processes: they exclude each other
    // only through the leases on the cache servers.
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        IqClient otherClient = cache.anotherClient();
        MySqlStore store = open(database);
        SessionWriteBack sessions =
            engine(cache.client, store, 2, "a", "b")
                .drainThreads(2)
                .idlePause(Duration.ofMillis(1))
                .build();
        SessionWriteBack otherProcess =
            engine(otherClient, store, 2, "a", "b")
                .drainThreads(1)
                .idlePause(Duration.ofMillis(1))
                .build()) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      WriteBackMeters.of(sessions).bindTo(registry);
      for (int queue = 0; queue < queues.size(); queue++) {
        List<EntityChanges> opening = new ArrayList<>();
        for (int id = 1 + queue * accountsPerQueue; id <= (queue + 1) * accountsPerQueue; id++) {
          opening.add(row(ACCOUNTS, id, insert(Map.of("balance", 1000L))));
          expected.set(id, 1000);
        }
        sessions.commit(queues.get(queue), opening);
      }

      ExecutorService pool = Executors.newFixedThreadPool(committers);
      List<Future<?>> done = new ArrayList<>();
      for (int committer = 0; committer < committers; committer++) {
        Random random = new Random(committer);
        SessionWriteBack engine = committer % 2 == 0 ? sessions : otherProcess;
        done.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < transfersPerCommitter; i++) {
                    int queue = random.nextInt(queues.size());
                    int from = 1 + queue * accountsPerQueue + random.nextInt(accountsPerQueue);
                    int to =
                        1
                            + queue * accountsPerQueue
                            + (from - queue * accountsPerQueue + random.nextInt(3))
                                % accountsPerQueue;
                    long amount = 1 + random.nextInt(50);
                    engine.commit(
                        queues.get(queue),
                        List.of(
                            row(ACCOUNTS, from, inc("balance", -amount)),
                            row(ACCOUNTS, to, inc("balance", amount))));
                    expected.addAndGet(from, -amount);
                    expected.addAndGet(to, amount);
                    if (i % 3 == 0) {
                      assertThat(engine.read(new EntityKey(ACCOUNTS, to))).isPresent();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> committer : done) {
        committer.get(120, TimeUnit.SECONDS);
      }
      pool.shutdown();
      sessions.drainNow();

      long sum = 0;
      for (int id = 1; id < expected.length(); id++) {
        Object balance =
            store.read(new EntityKey(ACCOUNTS, id)).orElseThrow().fields().get("balance");
        assertThat(((Number) balance).longValue()).as("account %d", id).isEqualTo(expected.get(id));
        sum += ((Number) balance).longValue();
      }
      assertThat(sum).isEqualTo(1000L * (expected.length() - 1));
      int sessionsCommitted = queues.size() + committers * transfersPerCommitter;
      assertThat(appliedSessionIds(database))
          .as("each session applied once")
          .hasSize(sessionsCommitted);
      WriteBackMetrics metrics = sessions.metrics();
      WriteBackMetrics other = otherProcess.metrics();
      assertThat(metrics.pendingWrites()).isZero();
      assertThat(metrics.drained() + other.drained()).isEqualTo(sessionsCommitted);
      assertThat(metrics.writeThroughFallbacks() + other.writeThroughFallbacks()).isZero();
      assertThat(
              registry
                  .get("dendrite.writeback.drained")
                  .tag("engine", "sessions")
                  .functionCounter()
                  .count())
          .isEqualTo(metrics.drained());
      assertThat(registry.get("dendrite.writeback.pending").gauge().value()).isZero();
    }
  }

  @Test
  void aSessionAppliedByADrainerThatDiedBeforeDeletingItIsNotAppliedAgain(
      MySqlTestDatabase database) throws SQLException {
    createAccounts(database);
    EntityKey account = new EntityKey(ACCOUNTS, 1);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        SessionWriteBack sessions =
            SessionWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .build()) {
      sessions.commit("0", List.of(row(ACCOUNTS, 1, insert(Map.of("balance", 100L)))));
      sessions.drainNow();

      List<EntityChanges> deposit = List.of(row(ACCOUNTS, 1, inc("balance", 5)));
      String id = sessions.commit("0", deposit);
      // The drainer's database commit, then it dies: the session object and its queue line stay in
      // the cache.
      assertThat(store.applyOnce(id, deposit)).isTrue();
      assertThat(balance(store, account)).isEqualTo(105);
      sessions.drainNow();
      assertThat(balance(store, account)).as("applied once").isEqualTo(105);
      assertThat(sessions.metrics().pendingWrites()).isZero();

      // Negative control: forgetting applied ids by age while the session is still buffered
      // double-applies it, and the balance check sees it.
      String again = sessions.commit("0", List.of(row(ACCOUNTS, 1, inc("balance", 7))));
      assertThat(store.applyOnce(again, List.of(row(ACCOUNTS, 1, inc("balance", 7))))).isTrue();
      store.forgetAppliedSessionsBefore(Instant.now().plusSeconds(60));
      sessions.drainNow();
      assertThat(balance(store, account)).isEqualTo(105 + 7 + 7);
    }
  }

  @Test
  void aReadSeesCommittedSessionsBeforeAnyDrain(MySqlTestDatabase database) throws SQLException {
    createAccounts(database);
    EntityKey first = new EntityKey(ACCOUNTS, 1);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        SessionWriteBack sessions =
            SessionWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .build()) {
      sessions.commit("0", List.of(row(ACCOUNTS, 1, insert(Map.of("balance", 10L)))));
      sessions.drainNow();
      sessions.commit(
          "0", List.of(row(ACCOUNTS, 1, inc("balance", 5)), row(ACCOUNTS, 1, inc("balance", 1))));
      sessions.commit("0", List.of(row(ACCOUNTS, 1, inc("balance", 100))));
      for (int i = 0; i < BufferedSessions.DRAIN_BATCH + 8; i++) {
        sessions.commit(
            "0", List.of(row(ACCOUNTS, 1, inc("balance", 1)))); // more than one batch to apply
      }
      sessions.commit("0", List.of(row(ACCOUNTS, 2, insert(Map.of("balance", 1L)))));

      assertThat(balance(store, first)).as("control: the database alone is stale").isEqualTo(10);
      assertThat(
              sessions
                  .read(first)
                  .map(fields -> ((Number) fields.fields().get("balance")).longValue()))
          .contains(116L + BufferedSessions.DRAIN_BATCH + 8);
      assertThat(sessions.metrics().pendingWrites())
          .as("the later session on another row waits")
          .isEqualTo(1);
      assertThat(
              sessions
                  .read(first)
                  .map(fields -> ((Number) fields.fields().get("balance")).longValue()))
          .as("a second read applies nothing again")
          .contains(116L + BufferedSessions.DRAIN_BATCH + 8);
    }
  }

  @Test
  void compactionForgetsOnlyAppliedSessionsGoneFromTheCache(MySqlTestDatabase database)
      throws Exception {
    createAccounts(database);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        SessionWriteBack sessions =
            SessionWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .appliedSessionsGrace(Duration.ZERO)
                .build()) {
      Set<String> drained = new HashSet<>();
      drained.add(sessions.commit("0", List.of(row(ACCOUNTS, 1, insert(Map.of("balance", 0L))))));
      drained.add(sessions.commit("0", List.of(row(ACCOUNTS, 1, inc("balance", 1)))));
      drained.add(sessions.commit("0", List.of(row(ACCOUNTS, 1, inc("balance", 2)))));
      sessions.drainNow();
      List<EntityChanges> stillBuffered = List.of(row(ACCOUNTS, 1, inc("balance", 4)));
      String appliedButBuffered = sessions.commit("0", stillBuffered);
      store.applyOnce(appliedButBuffered, stillBuffered);
      store.applyOnce(
          "another-application", List.of(row(ACCOUNTS, 2, insert(Map.of("balance", 9L)))));
      assertThat(appliedSessionIds(database)).containsAll(drained).contains(appliedButBuffered);
      Thread.sleep(5);

      assertThat(sessions.compactAppliedSessions()).isEqualTo(3);
      assertThat(appliedSessionIds(database))
          .containsExactlyInAnyOrder(appliedButBuffered, "another-application");

      sessions.drainNow();
      assertThat(balance(store, new EntityKey(ACCOUNTS, 1))).as("still applied once").isEqualTo(7);
      Thread.sleep(5);
      assertThat(sessions.compactAppliedSessions()).isEqualTo(1);
      assertThat(appliedSessionIds(database)).containsExactly("another-application");
    }
  }

  @Test
  void badInputIsRefusedClearlyAndNothingIsBuffered(MySqlTestDatabase database)
      throws SQLException {
    createAccounts(database);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        SessionWriteBack sessions =
            SessionWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .queues("a", "b")
                .maxSessionBytes(300)
                .build()) {
      EntityChanges good = row(ACCOUNTS, 1, insert(Map.of("balance", 1L)));
      assertThatThrownBy(() -> sessions.commit("a", List.of()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("at least one row");
      assertThatThrownBy(() -> sessions.commit("a", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("at least one row");
      for (String queue : Arrays.asList(null, "", " ", "c")) {
        assertThatThrownBy(() -> sessions.commit(queue, List.of(good)))
            .as("queue %s", queue)
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("queue must be one of [a, b]");
      }
      assertThatThrownBy(
              () ->
                  sessions.commit(
                      "a",
                      List.of(
                          good,
                          new EntityChanges(new EntityKey(ACCOUNTS, 2), ChangeSequence.empty()))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("at least one change");
      assertThatThrownBy(() -> sessions.commit("a", List.of(row(ACCOUNTS, 1, push("balance", 1)))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not a row change");
      assertThatThrownBy(() -> sessions.commit("a", List.of(row("no_such_table", 1, set("x", 1)))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no_such_table");
      assertThatThrownBy(
              () ->
                  sessions.commit("a", List.of(row(ACCOUNTS, 1, set("balance", "x".repeat(400))))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("exceeds maxSessionBytes 300");
      assertThat(sessions.metrics().pendingWrites()).isZero();

      sessions.commit("a", List.of(good));
      assertThatThrownBy(() -> sessions.commit("b", List.of(row(ACCOUNTS, 1, inc("balance", 1)))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("must share a queue");
      assertThat(sessions.metrics().pendingWrites()).isEqualTo(1);
      sessions.drainNow();
      assertThat(balance(store, new EntityKey(ACCOUNTS, 1))).isEqualTo(1);
      assertThat(appliedSessionIds(database)).hasSize(1);

      assertThatThrownBy(() -> SessionWriteBack.builder().replicas(1).queues("a".repeat(65)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("1 to 64");
      assertThatThrownBy(() -> SessionWriteBack.builder().replicas(1).queues("has space"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("has space");
      assertThatThrownBy(() -> SessionWriteBack.builder().replicas(1).queues("a", "a"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("distinct");
    }
  }

  @Test
  void overThePinnedBudgetSessionsFallBackToWriteThroughInCommitOrder(MySqlTestDatabase database)
      throws SQLException {
    createParentsAndChildren(database);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        SessionWriteBack sessions =
            SessionWriteBack.builder()
                .replicas(1)
                .cache(cache.client)
                .store(store)
                .drainThreads(0)
                .pinnedBudgetBytes(400)
                .build()) {
      for (int parent = 1; parent <= 10; parent++) {
        sessions.commit("0", List.of(row("parents", parent, insert(Map.of("name", "p" + parent)))));
        // The child's session may fall back while its parent's is still buffered: the queue goes
        // first.
        sessions.commit(
            "0", List.of(row("children", 100 + parent, insert(Map.of("parent_id", parent)))));
        sessions.commit("0", List.of(row("parents", parent, set("name", "q" + parent))));
      }

      WriteBackMetrics metrics = sessions.metrics();
      assertThat(metrics.writeThroughFallbacks()).isPositive();
      assertThat(metrics.pinnedBytes()).isLessThanOrEqualTo(400);
      sessions.drainNow();
      for (int parent = 1; parent <= 10; parent++) {
        assertThat(store.read(new EntityKey("parents", parent)).map(Entity::fields))
            .contains(Map.of("name", "q" + parent));
        assertThat(store.read(new EntityKey("children", 100 + parent)).map(Entity::fields))
            .contains(Map.of("parent_id", parent));
      }
      assertThat(appliedSessionIds(database)).hasSize(30);
      assertThat(sessions.metrics().pinnedBytes()).isZero();
    }
  }

  @Test
  void anUndecodableSessionIsMovedAsideAndTheSessionsBehindItStillApply(MySqlTestDatabase database)
      throws SQLException {
    createAccounts(database);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        SessionWriteBack sessions =
            SessionWriteBack.builder()
                .cache(cache.client)
                .store(store)
                .replicas(2)
                .drainThreads(0)
                .build()) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      WriteBackMeters.of(sessions).bindTo(registry);
      String first =
          sessions.commit("0", List.of(row(ACCOUNTS, 1, insert(Map.of("balance", 100)))));
      String damaged =
          sessions.commit("0", List.of(row(ACCOUNTS, 2, insert(Map.of("balance", 200)))));
      String third =
          sessions.commit("0", List.of(row(ACCOUNTS, 3, insert(Map.of("balance", 300)))));
      String objectKey = SessionIds.objectKey(damaged);
      DamagedValue damagedValue = DamagedValue.plant(cache.client, 2, objectKey);

      assertThatThrownBy(() -> sessions.read(new EntityKey(ACCOUNTS, 2)))
          .as("a read cannot apply it, so it must not serve the row without it")
          .isInstanceOf(UndecodableValueException.class)
          .hasMessageContaining(objectKey);
      String fourth =
          sessions.commit(
              "0",
              List.of(row(ACCOUNTS, 1, inc("balance", 5)), row(ACCOUNTS, 3, inc("balance", 7))));

      sessions.drainNow();

      assertThat(balance(store, new EntityKey(ACCOUNTS, 1))).isEqualTo(105);
      assertThat(balance(store, new EntityKey(ACCOUNTS, 3))).isEqualTo(307);
      assertThat(store.read(new EntityKey(ACCOUNTS, 2))).isEmpty();
      assertThat(appliedSessionIds(database))
          .containsExactlyInAnyOrder(first, third, fourth)
          .doesNotContain(damaged);
      WriteBackMetrics metrics = sessions.metrics();
      damagedValue.assertMovedAsideOnce(metrics, registry);
      assertThat(metrics.pendingWrites()).isZero();
      assertThat(metrics.drained()).isEqualTo(3);
      assertThat(sessions.read(new EntityKey(ACCOUNTS, 2)))
          .as("read again once the damaged session is aside")
          .isEmpty();
    }
  }

  private static EntityChanges row(String table, int id, Change... changes) {
    return new EntityChanges(new EntityKey(table, id), ChangeSequence.of(changes));
  }

  private static long balance(MySqlStore store, EntityKey account) {
    return ((Number) store.read(account).orElseThrow().fields().get("balance")).longValue();
  }

  private static List<String> appliedSessionIds(MySqlTestDatabase database) throws SQLException {
    List<String> ids = new ArrayList<>();
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement();
        ResultSet rows =
            statement.executeQuery("SELECT session_id FROM dendrite_applied_sessions")) {
      while (rows.next()) {
        ids.add(rows.getString(1));
      }
    }
    return ids;
  }

  private static void createAccounts(MySqlTestDatabase database) throws SQLException {
    execute(database, "CREATE TABLE accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL)");
  }

  private static void createParentsAndChildren(MySqlTestDatabase database) throws SQLException {
    execute(
        database,
        "CREATE TABLE parents (id INT PRIMARY KEY, name VARCHAR(64)) ENGINE=InnoDB",
        "CREATE TABLE children (id INT PRIMARY KEY, parent_id INT NOT NULL,"
            + " FOREIGN KEY (parent_id) REFERENCES parents (id)) ENGINE=InnoDB");
  }

  private static void execute(MySqlTestDatabase database, String... statements)
      throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        statement.execute(sql);
      }
    }
  }

  private static MySqlStore open(MySqlTestDatabase database) {
    return MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
  }
}
