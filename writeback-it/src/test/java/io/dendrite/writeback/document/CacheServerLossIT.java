package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.writeback.IqServerProcess;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWrites;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Three IQ servers in processes of their own; writers and drain threads run while one server is killed with
 * SIGKILL. With R = 3 every buffered write keeps two replicas, so every acknowledged write must reach the
 * database, and writers keep being acknowledged after the loss (on the two surviving replicas). A write that
 * throws was not acknowledged and may or may not be applied: its writer leaves that document alone from then on,
 * and the check accepts the document with or without that one write.
 */
@ExtendWith(RealServers.class)
class CacheServerLossIT {
  private static final int DOCUMENTS = 40;
  private static final int WRITERS = 4;
  private static final int WRITES_PER_PHASE = 150;
  private static final Duration PHASE_LIMIT = Duration.ofSeconds(10);

  private final List<IqServerProcess> servers = new ArrayList<>();

  @AfterEach
  void killServers() {
    servers.forEach(IqServerProcess::close);
  }

  @Test
  void everyAcknowledgedWriteReachesTheDatabaseWhenOneOfThreeReplicasIsKilled(
      MySqlTestDatabase database) throws Exception {
    Run run = writeKillAndDrain(database, 3, 2, false);
    assertThat(run.pendingAtKill).as("buffered writes at the kill").isPositive();
    assertThat(run.acknowledgedAfterKill).as("writers kept being acknowledged").isPositive();
    assertThat(run.mismatches()).isEmpty();
  }

  /**
   * The same with in-process locks and the stepped write that range write-back uses (the buffered write and its
   * listing in flight together, {@link BufferedWrites#startWrite}).
   */
  @Test
  void withInProcessLocksEveryAcknowledgedWriteReachesTheDatabaseWhenOneOfThreeReplicasIsKilled(
      MySqlTestDatabase database) throws Exception {
    Run run = writeKillAndDrain(database, 3, 2, true);
    assertThat(run.pendingAtKill).as("buffered writes at the kill").isPositive();
    assertThat(run.acknowledgedAfterKill).as("writers kept being acknowledged").isPositive();
    assertThat(run.mismatches()).isEmpty();
  }

  /** Negative control: with one replica the killed server takes buffered writes with it, and the check says so. */
  @Test
  void withOneReplicaTheCheckCatchesTheLostWrites(MySqlTestDatabase database) throws Exception {
    Run run = writeKillAndDrain(database, 1, 0, false);
    assertThat(run.mismatches()).isNotEmpty();
  }

  /** Acknowledged and unacknowledged writes of one run, and the store they must be found in. */
  private record Run(
      DocumentModel model,
      Map<EntityKey, ChangeSequence> unacknowledged,
      MySqlStore store,
      long pendingAtKill,
      int acknowledgedAfterKill) {
    /** Documents whose stored state is neither the model nor the model with its one unacknowledged write. */
    List<String> mismatches() {
      List<String> mismatches = new ArrayList<>();
      for (int id = 1; id <= DOCUMENTS; id++) {
        EntityKey key = new EntityKey("users", id);
        Optional<Map<String, Object>> expected = model.expected(key);
        Optional<Map<String, Object>> actual = store.read(key).map(Entity::fields);
        boolean withUnacknowledged =
            unacknowledged.containsKey(key)
                && actual.equals(unacknowledged.get(key).applyTo(expected));
        if (!actual.equals(expected) && !withUnacknowledged) {
          mismatches.add(key.id() + ": expected " + expected + " but found " + actual);
        }
      }
      return mismatches;
    }
  }

  private Run writeKillAndDrain(
      MySqlTestDatabase database, int replicas, int drainThreads, boolean inProcess)
      throws Exception {
    MySqlStore store = seededStore(database);
    DocumentModel model = new DocumentModel();
    for (int id = 1; id <= DOCUMENTS; id++) {
      model.record(new EntityKey("users", id), seed(id));
    }
    List<CompletableFuture<IqServerProcess>> starting = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      starting.add(CompletableFuture.supplyAsync(() -> IqServerProcess.start(3_000)));
    }
    for (CompletableFuture<IqServerProcess> server : starting) {
      servers.add(server.get(60, TimeUnit.SECONDS));
    }
    Map<EntityKey, ChangeSequence> unacknowledged = new ConcurrentHashMap<>();
    AtomicInteger acknowledged = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
    try (IqClient cache =
            IqClient.builder()
                .servers(servers.stream().map(IqServerProcess::address).toList())
                .connectTimeout(Duration.ofSeconds(1))
                .requestTimeout(Duration.ofSeconds(2))
                .build();
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache)
                .store(store)
                .replicas(replicas)
                .partitions(8)
                .drainThreads(drainThreads)
                .idlePause(Duration.ofMillis(5))
                .singleProcess(inProcess)
                .build()) {
      List<Future<?>> done = new ArrayList<>();
      for (int writer = 0; writer < WRITERS; writer++) {
        int first = writer + 1;
        done.add(
            writers.submit(
                () ->
                    write(writeBack, inProcess, model, first, stop, acknowledged, unacknowledged)));
      }
      awaitAcknowledged(acknowledged, WRITES_PER_PHASE);
      long pendingAtKill = writeBack.metrics().pendingWrites();
      servers.get(1).kill();
      int beforeKill = acknowledged.get();
      awaitAcknowledged(acknowledged, beforeKill + WRITES_PER_PHASE);
      stop.set(true);
      for (Future<?> writer : done) {
        try {
          writer.get(60, TimeUnit.SECONDS);
        } catch (TimeoutException stuck) {
          throw new AssertionError(
              "a writer did not return within 60 s of being stopped; threads:\n" + threadDump(),
              stuck);
        }
      }
      if (replicas > 1) {
        writeBack.drainNow();
        assertThat(writeBack.metrics().pendingWrites()).isZero();
      } else {
        // The killed server held the only copy of some: they stay listed, and the drain says so.
        try {
          writeBack.drainNow();
        } catch (IqException noServerAnswered) {
          assertThat(noServerAnswered).hasMessageContaining("stay listed");
        }
      }
      if (replicas > 1) {
        // A buffered write left unlisted would swallow later writes unseen by the pending count:
        // look on the servers.
        List<EntityKey> documents = new ArrayList<>();
        for (int id = 1; id <= DOCUMENTS; id++) {
          documents.add(new EntityKey("users", id));
        }
        assertThat(
                BufferedWritesOnServers.find(
                    servers.stream().map(IqServerProcess::address).toList(), documents))
            .as("buffered writes left on the surviving servers after drainNow")
            .isEmpty();
      }
      return new Run(model, unacknowledged, store, pendingAtKill, acknowledged.get() - beforeKill);
    } finally {
      writers.shutdownNow();
    }
  }

  /** One writer: increments and renames its own documents until stopped; a failed write retires its document. */
  private static Void write(
      DocumentWriteBack writeBack,
      boolean stepped,
      DocumentModel model,
      int first,
      AtomicBoolean stop,
      AtomicInteger acknowledged,
      Map<EntityKey, ChangeSequence> unacknowledged) {
    List<EntityKey> mine = new ArrayList<>();
    for (int id = first; id <= DOCUMENTS; id += WRITERS) {
      mine.add(new EntityKey("users", id));
    }
    for (int i = 0; !stop.get() && !mine.isEmpty(); i++) {
      EntityKey key = mine.get(i % mine.size());
      ChangeSequence changes = ChangeSequence.of(inc("score", 1), set("name", "w" + i));
      try {
        if (stepped) {
          BufferedWrites.StartedWrite started = writeBack.engine().startWrite(Map.of(key, changes));
          started.store();
          started.await();
        } else {
          writeBack.write(key, changes);
        }
      } catch (RuntimeException failed) {
        unacknowledged.put(key, changes);
        mine.remove(key);
        continue;
      }
      model.record(key, changes);
      acknowledged.incrementAndGet();
    }
    return null;
  }

  /** Every live thread's stack, for a failure that must say where something hung. */
  static String threadDump() {
    StringBuilder dump = new StringBuilder();
    Thread.getAllStackTraces()
        .forEach(
            (thread, stack) -> {
              dump.append('"')
                  .append(thread.getName())
                  .append("\" ")
                  .append(thread.getState())
                  .append('\n');
              for (StackTraceElement frame : stack) {
                dump.append("    at ").append(frame).append('\n');
              }
            });
    return dump.toString();
  }

  private static void awaitAcknowledged(AtomicInteger acknowledged, int target)
      throws InterruptedException {
    long deadline = System.nanoTime() + PHASE_LIMIT.toNanos();
    while (acknowledged.get() < target && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
  }

  private static ChangeSequence seed(int id) {
    return ChangeSequence.of(insert(Map.of("name", "u" + id, "score", 0)));
  }

  private static MySqlStore seededStore(MySqlTestDatabase database) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
    }
    MySqlStore store = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
    List<EntityChanges> seed = new ArrayList<>();
    for (int id = 1; id <= DOCUMENTS; id++) {
      seed.add(new EntityChanges(new EntityKey("users", id), seed(id)));
    }
    store.apply(seed);
    return store;
  }
}
