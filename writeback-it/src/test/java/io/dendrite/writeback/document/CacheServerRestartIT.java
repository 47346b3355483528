package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.writeback.IqServerProcess;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.session.SessionWriteBack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A rolling restart of the cache tier: three IQ servers in processes of their own, R = 2, and each server in turn
 * SIGKILLed and started again, empty, on its address. Every buffered write has lost a copy after each restart; the
 * engine's replica repair must write it back before the next restart takes the other copy, so that every
 * acknowledged write still reaches the database at the end. Nothing is written or drained meanwhile, so only the
 * repair can have restored anything.
 *
 * <p>Also a server that stays down: the repair must give its copies to the next servers on the ring, so that a
 * second server's loss later still leaves a copy of everything; and when it comes back, move them back to it and
 * leave none outside their placement.
 */
@ExtendWith(RealServers.class)
class CacheServerRestartIT {
  private static final int DOCUMENTS = 40;
  private static final int REPLICAS = 2;
  private static final Duration RESTORE_LIMIT = Duration.ofSeconds(30);

  /** Ten looks of the repair thread (100 ms apart here) and the copying, with room for a busy machine. */
  private static final long HANDOVER_MILLIS = 5_000;

  private final List<IqServerProcess> servers = new ArrayList<>();

  @AfterEach
  void killServers() {
    servers.forEach(IqServerProcess::close);
  }

  @Test
  void everyAcknowledgedWriteSurvivesARollingRestartOfEveryCacheServer(MySqlTestDatabase database)
      throws Exception {
    Run run = writeThenRestartEachServer(database, Duration.ofMillis(100));
    assertThat(run.mismatches()).isEmpty();
    assertThat(run.pendingAfterDrain()).isZero();
    assertThat(run.leftOnServers())
        .as("buffered writes left on the servers after drainNow")
        .isEmpty();
  }

  /** Negative control: without the repair each buffered write loses both copies, and the check says so. */
  @Test
  void withoutReplicaRepairTheCheckCatchesTheLostWrites(MySqlTestDatabase database)
      throws Exception {
    Run run = writeThenRestartEachServer(database, Duration.ZERO);
    assertThat(run.mismatches()).isNotEmpty();
  }

  @Test
  void everyAcknowledgedSessionSurvivesARollingRestartOfEveryCacheServer(MySqlTestDatabase database)
      throws Exception {
    Run run = commitSessionsThenRestartEachServer(database, Duration.ofMillis(100));
    assertThat(run.mismatches()).isEmpty();
    assertThat(run.pendingAfterDrain()).isZero();
  }

  /** Negative control: without the repair the sessions' queue and objects lose both copies, and the check says so. */
  @Test
  void withoutReplicaRepairTheCheckCatchesTheLostSessions(MySqlTestDatabase database)
      throws Exception {
    Run run = commitSessionsThenRestartEachServer(database, Duration.ZERO);
    assertThat(run.mismatches()).isNotEmpty();
  }

  @Test
  void aServerThatStaysDownIsReplacedSoThatASecondLossLosesNothing(MySqlTestDatabase database)
      throws Exception {
    Run run = writeThenLoseTwoServers(database, Duration.ZERO, false);
    assertThat(run.mismatches()).isEmpty();
    assertThat(run.pendingAfterDrain()).isZero();
    assertThat(run.leftOnServers())
        .as("buffered writes left on the servers after drainNow")
        .isEmpty();
  }

  /**
   * Negative control: a server that is never replaced leaves one copy of what it shared with the second server,
   * and the second loss takes that; the check says so.
   */
  @Test
  void withoutReplacementTheCheckCatchesTheWritesASecondLossTakes(MySqlTestDatabase database)
      throws Exception {
    Run run = writeThenLoseTwoServers(database, Duration.ofDays(1), false);
    assertThat(run.mismatches()).isNotEmpty();
  }

  @Test
  void aReplacedServerThatComesBackTakesItsCopiesBackAndNoneStayOutsidePlacement(
      MySqlTestDatabase database) throws Exception {
    Run run = writeThenLoseTwoServers(database, Duration.ZERO, true);
    assertThat(run.mismatches()).isEmpty();
    assertThat(run.pendingAfterDrain()).isZero();
    assertThat(run.leftOnServers())
        .as("buffered writes left on the servers after drainNow")
        .isEmpty();
  }

  /**
   * A server stopped with SIGTERM (a service manager's stop, a scale-in) hands over first: it says it is leaving,
   * the repair takes it out of placement at once and copies what it shared with the others to the next servers, and
   * then it stops. So a second loss later loses nothing, with no wait for {@code replaceDownServerAfter}.
   */
  @Test
  void aServerStoppedWithSigtermHandsOverItsCopiesFirst(MySqlTestDatabase database)
      throws Exception {
    Run run = writeThenStopOneAndKillAnother(database, HANDOVER_MILLIS);
    assertThat(run.mismatches()).isEmpty();
    assertThat(run.pendingAfterDrain()).isZero();
    assertThat(run.leftOnServers())
        .as("buffered writes left on the servers after drainNow")
        .isEmpty();
  }

  /** Negative control: stopped without a handover ({@code --handover-ms 0}), the second loss takes writes. */
  @Test
  void withoutAHandoverTheCheckCatchesTheWritesASecondLossTakes(MySqlTestDatabase database)
      throws Exception {
    Run run = writeThenStopOneAndKillAnother(database, 0);
    assertThat(run.mismatches()).isNotEmpty();
  }

  private Run writeThenStopOneAndKillAnother(MySqlTestDatabase database, long handoverMillis)
      throws Exception {
    DocumentModel model = new DocumentModel();
    MySqlStore store = UsersTable.seeded(database, documents(), model);
    List<ServerAddress> addresses = startServers(handoverMillis);
    try (IqClient cache =
            IqClient.builder()
                .servers(addresses)
                .connectTimeout(Duration.ofSeconds(1))
                .requestTimeout(Duration.ofSeconds(2))
                .build();
        // Never replaced for being down: only the handover can move the copies before the second
        // loss.
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache)
                .store(store)
                .replicas(REPLICAS)
                .partitions(4)
                .drainThreads(0)
                .replicaCheckInterval(Duration.ofMillis(100))
                .replaceDownServerAfter(Duration.ofDays(1))
                .build()) {
      for (int round = 0; round < 3; round++) {
        for (EntityKey key : documents()) {
          model.tryWrite(
              writeBack, key, ChangeSequence.of(inc("score", 1), set("name", "r" + round)));
        }
      }
      // A write is reported as not done only when its commit lapsed on some replicas under load (3
      // s
      // leases): rare, or the checks below would test little.
      assertThat(model.unknownCount()).as("writes whose outcome is unknown").isLessThanOrEqualTo(2);
      servers.get(0).terminate(); // returns once the process is gone, its handover (if any) done
      if (handoverMillis > 0) {
        assertThat(cache.replicaPlacement().excluded()).containsExactly(addresses.get(0));
      }
      servers.get(1).kill();
      drainKeepingWritesWithNoServerLeft(writeBack);
      return new Run(
          UsersTable.mismatches(store, model, documents()),
          writeBack.metrics().pendingWrites(),
          BufferedWritesOnServers.find(addresses, documents()));
    }
  }

  private record Run(List<String> mismatches, long pendingAfterDrain, List<String> leftOnServers) {}

  /**
   * {@link DocumentWriteBack#drainNow}; in the negative controls the second loss took every copy of some buffered writes,
   * and the drain keeps those listed and says so (an {@link IqException}): the check below then finds them lost.
   */
  private static void drainKeepingWritesWithNoServerLeft(DocumentWriteBack writeBack) {
    try {
      writeBack.drainNow();
    } catch (IqException noServerAnswered) {
      assertThat(noServerAnswered).hasMessageContaining("stay listed");
    }
  }

  private Run commitSessionsThenRestartEachServer(
      MySqlTestDatabase database, Duration replicaCheckInterval) throws Exception {
    DocumentModel model = new DocumentModel();
    MySqlStore store = UsersTable.seeded(database, documents(), model);
    List<ServerAddress> addresses = startServers();
    try (IqClient cache =
            IqClient.builder()
                .servers(addresses)
                .connectTimeout(Duration.ofSeconds(1))
                .requestTimeout(Duration.ofSeconds(5))
                .build();
        SessionWriteBack sessions =
            SessionWriteBack.builder()
                .cache(cache)
                .store(store)
                .replicas(REPLICAS)
                .queues("0")
                .drainThreads(0)
                .replicaCheckInterval(replicaCheckInterval)
                .build()) {
      List<String> keys = new ArrayList<>(List.of("SessionQueue:0"));
      documents().forEach(key -> keys.add("SessionMap:" + BufferedWriteKey.of(key)));
      List<EntityKey> documents = documents();
      for (int i = 0; i < DOCUMENTS; i++) {
        // Each session moves a point from one document to the next, as a transfer does.
        EntityKey from = documents.get(i);
        EntityKey to = documents.get((i + 1) % DOCUMENTS);
        ChangeSequence take = ChangeSequence.of(inc("score", -1), set("name", "s" + i));
        ChangeSequence give = ChangeSequence.of(inc("score", 1));
        String id =
            sessions.commit(
                "0", List.of(new EntityChanges(from, take), new EntityChanges(to, give)));
        model.record(from, take);
        model.record(to, give);
        keys.add("Session:" + id); // the session object's key, as SessionIds.objectKey names it
      }
      restartEachServer(cache, addresses, !replicaCheckInterval.isZero(), keys);
      sessions.drainNow();
      return new Run(
          UsersTable.mismatches(store, model, documents()),
          sessions.metrics().pendingWrites(),
          List.of());
    }
  }

  private Run writeThenRestartEachServer(MySqlTestDatabase database, Duration replicaCheckInterval)
      throws Exception {
    DocumentModel model = new DocumentModel();
    MySqlStore store = UsersTable.seeded(database, documents(), model);
    List<ServerAddress> addresses = startServers();
    try (IqClient cache =
            IqClient.builder()
                .servers(addresses)
                .connectTimeout(Duration.ofSeconds(1))
                .requestTimeout(Duration.ofSeconds(5))
                .build();
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache)
                .store(store)
                .replicas(REPLICAS)
                .partitions(4)
                .drainThreads(0)
                .replicaCheckInterval(replicaCheckInterval)
                .build()) {
      for (int round = 0; round < 3; round++) {
        for (EntityKey key : documents()) {
          model.tryWrite(
              writeBack, key, ChangeSequence.of(inc("score", 1), set("name", "r" + round)));
        }
      }
      // A write is reported as not done only when its commit lapsed on some replicas under load (3
      // s
      // leases): rare, or the checks below would test little.
      assertThat(model.unknownCount()).as("writes whose outcome is unknown").isLessThanOrEqualTo(2);
      List<String> keys = new ArrayList<>(documents().stream().map(BufferedWriteKey::of).toList());
      IntStream.range(0, 4).forEach(partition -> keys.add("PendingWrites:" + partition));
      restartEachServer(cache, addresses, !replicaCheckInterval.isZero(), keys);
      writeBack.drainNow();
      return new Run(
          UsersTable.mismatches(store, model, documents()),
          writeBack.metrics().pendingWrites(),
          BufferedWritesOnServers.find(addresses, documents()));
    }
  }

  /**
   * SIGKILLs the first server for good (with {@code firstComesBack}: until every copy moved, then starts it again,
   * empty, and waits until it holds its copies and no copy is left outside its placement), then SIGKILLs the second
   * and drains. With {@code replaceAfter} of a day the first server is never replaced.
   */
  private Run writeThenLoseTwoServers(
      MySqlTestDatabase database, Duration replaceAfter, boolean firstComesBack) throws Exception {
    DocumentModel model = new DocumentModel();
    MySqlStore store = UsersTable.seeded(database, documents(), model);
    List<ServerAddress> addresses = startServers();
    boolean replaced = replaceAfter.compareTo(RESTORE_LIMIT) < 0;
    try (IqClient cache =
            IqClient.builder()
                .servers(addresses)
                .connectTimeout(Duration.ofSeconds(1))
                .requestTimeout(Duration.ofSeconds(2))
                .build();
        DocumentWriteBack writeBack =
            DocumentWriteBack.builder()
                .cache(cache)
                .store(store)
                .replicas(REPLICAS)
                .partitions(4)
                .drainThreads(0)
                .replicaCheckInterval(Duration.ofMillis(100))
                .replaceDownServerAfter(replaceAfter)
                .build()) {
      for (int round = 0; round < 3; round++) {
        for (EntityKey key : documents()) {
          model.tryWrite(
              writeBack, key, ChangeSequence.of(inc("score", 1), set("name", "r" + round)));
        }
      }
      // A write is reported as not done only when its commit lapsed on some replicas under load (3
      // s
      // leases): rare, or the checks below would test little.
      assertThat(model.unknownCount()).as("writes whose outcome is unknown").isLessThanOrEqualTo(2);
      List<String> keys = new ArrayList<>(documents().stream().map(BufferedWriteKey::of).toList());
      IntStream.range(0, 4).forEach(partition -> keys.add("PendingWrites:" + partition));
      servers.get(0).kill();
      if (replaced) {
        awaitEveryCopy(
            cache, addresses, keys); // on the substitutes: the killed server is out of placement
        assertThat(cache.replicaPlacement().excluded()).containsExactly(addresses.get(0));
      } else {
        Thread.sleep(1_000); // ten looks of the repair, which must not move anything
        assertThat(cache.replicaPlacement().excluded()).isEmpty();
      }
      if (firstComesBack) {
        servers.set(0, servers.get(0).restartEmpty());
        awaitTrue(
            () -> cache.replicaPlacement().excluded().isEmpty(),
            "the restarted server back in placement");
        awaitEveryCopy(cache, addresses, keys);
        awaitTrue(
            () -> copiesOutsidePlacement(cache, addresses, keys).isEmpty(),
            "no copy outside its placement ("
                + copiesOutsidePlacement(cache, addresses, keys)
                + ")");
      }
      servers.get(1).kill();
      drainKeepingWritesWithNoServerLeft(writeBack);
      return new Run(
          UsersTable.mismatches(store, model, documents()),
          writeBack.metrics().pendingWrites(),
          BufferedWritesOnServers.find(addresses, documents()));
    }
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + RESTORE_LIMIT.toNanos();
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(condition.getAsBoolean()).as("within %s: %s", RESTORE_LIMIT, what).isTrue();
  }

  /** {@code <server> holds <key>} for every copy on a server outside the key's placement. */
  private static List<String> copiesOutsidePlacement(
      IqClient cache, List<ServerAddress> addresses, List<String> keys) {
    List<String> outside = new ArrayList<>();
    heldByServer(addresses, keys)
        .forEach(
            (server, held) ->
                held.keySet().stream()
                    .filter(
                        key -> !cache.replicaPlacement().serversFor(key, REPLICAS).contains(server))
                    .forEach(key -> outside.add(server + " holds " + key)));
    return outside;
  }

  /**
   * SIGKILLs each server in turn and starts it again, empty, on its address; with {@code awaitRepair}, waits after
   * each restart until every copy of {@code keys} is back, as an operator rolling the tier waits for the log line.
   */
  private void restartEachServer(
      IqClient cache, List<ServerAddress> addresses, boolean awaitRepair, List<String> keys)
      throws InterruptedException {
    for (int i = 0; i < servers.size(); i++) {
      servers.set(i, servers.get(i).restartEmpty());
      if (awaitRepair) {
        awaitEveryCopy(cache, addresses, keys);
      }
    }
  }

  /** Waits until each of {@code keys} that some server holds is on each of its R servers again. */
  private static void awaitEveryCopy(
      IqClient cache, List<ServerAddress> addresses, List<String> keys)
      throws InterruptedException {
    long deadline = System.nanoTime() + RESTORE_LIMIT.toNanos();
    List<String> missing = missingCopies(cache, addresses, keys);
    while (!missing.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(50);
      missing = missingCopies(cache, addresses, keys);
    }
    assertThat(missing)
        .as("copies still missing %s after a server restarted", RESTORE_LIMIT)
        .isEmpty();
  }

  /**
   * {@code <server> lacks <key>} for every key some server holds that one of its R servers does not, asked of each
   * server on its own (not through the replica logic under test).
   */
  private static List<String> missingCopies(
      IqClient cache, List<ServerAddress> addresses, List<String> keys) {
    Map<ServerAddress, Map<String, ?>> held = heldByServer(addresses, keys);
    List<String> missing = new ArrayList<>();
    for (String key : keys) {
      if (held.values().stream().noneMatch(values -> values.containsKey(key))) {
        continue;
      }
      for (ServerAddress server : cache.replicaPlacement().serversFor(key, REPLICAS)) {
        if (!held.get(server).containsKey(key)) {
          missing.add(server + " lacks " + key);
        }
      }
    }
    return missing;
  }

  /** What each server holds of {@code keys}, asked of each on its own; nothing for a server that is down. */
  private static Map<ServerAddress, Map<String, ?>> heldByServer(
      List<ServerAddress> addresses, List<String> keys) {
    Map<ServerAddress, Map<String, ?>> held = new java.util.LinkedHashMap<>();
    for (ServerAddress server : addresses) {
      try (IqClient one =
          IqClient.builder()
              .servers(List.of(server))
              .connectTimeout(Duration.ofSeconds(1))
              .requestTimeout(Duration.ofSeconds(5))
              .build()) {
        held.put(server, one.getAll(keys));
      } catch (IqConnectionException starting) {
        held.put(server, Map.of());
      }
    }
    return held;
  }

  private List<ServerAddress> startServers() throws Exception {
    return startServers(HANDOVER_MILLIS);
  }

  private List<ServerAddress> startServers(long handoverMillis) throws Exception {
    List<CompletableFuture<IqServerProcess>> starting = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      starting.add(
          CompletableFuture.supplyAsync(() -> IqServerProcess.start(3_000, handoverMillis)));
    }
    for (CompletableFuture<IqServerProcess> server : starting) {
      servers.add(server.get(60, TimeUnit.SECONDS));
    }
    return servers.stream().map(IqServerProcess::address).toList();
  }

  private static List<EntityKey> documents() {
    return UsersTable.documents(DOCUMENTS);
  }
}
