package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link Solution#CONTEXTUAL} on real IQ servers and MariaDB: instances, as processes, with different views of the
 * database, learning from the pending marker in each lease grant (not from a lookup) that a document has a buffered
 * write; and a cache server that restarts, losing its markers, whose grants say "maybe" until an instance has marked
 * every listed document again and sent {@code pready}. Each has a control showing what the marker prevents.
 */
@ExtendWith(RealServers.class)
class TardisContextualIT {
  /** Enough that each of the two servers holds several documents whatever ports the ring hashes. */
  private static final int DOCUMENTS = 64;

  private static final int PARTITIONS = 4;
  private static final long PINNED = 64L << 20;

  private MySqlStore mysql;
  private FaultyStore faulty;
  private EmbeddedIqServers cache;
  private final List<Tardis> opened = new ArrayList<>();

  @BeforeEach
  void seed(MySqlTestDatabase database) throws Exception {
    mysql = UsersTable.seed(database, DOCUMENTS, "");
    faulty = new FaultyStore(mysql);
    cache = EmbeddedIqServers.builder().count(2).pinnedMemoryBytes(PINNED).start();
  }

  @AfterEach
  void close() {
    opened.forEach(Tardis::close);
    cache.close();
    mysql.close();
  }

  /**
   * One instance buffers writes of uncached documents; others, in normal mode, get the documents' leases marked:
   * TAR refuses the miss, TARDIS applies the buffered write first for a miss and for a write, and clears the marker.
   */
  @Test
  void instancesInNormalModeMeetTheMarkerAnotherSet() throws Exception {
    Tardis tar = instance(Technique.TAR, settings -> settings);
    Tardis tardis = instance(Technique.TARDIS, settings -> settings);
    Tardis failed = failedInstance(settings -> settings);
    failed.write(key(5), ChangeSequence.of(set("name", "album"), inc("score", 1)));
    failed.write(key(6), ChangeSequence.of(set("name", "profile")));
    assertThat(tardis.mode()).isEqualTo(Mode.NORMAL);

    assertThatThrownBy(() -> tar.read(key(6))).isInstanceOf(TardisUnavailableException.class);
    assertThat(tardis.read(key(6)).orElseThrow().fields()).containsEntry("name", "profile");
    tardis.write(key(5), ChangeSequence.of(inc("score", 10)));

    assertThat(score(5)).as("the buffered increment first, then the new one").isEqualTo(11);
    assertThat(name(5)).isEqualTo("album");
    assertThat(name(6)).isEqualTo("profile");
    assertThat(tar.read(key(6)).orElseThrow().fields())
        .as("a hit now: TARDIS's miss filled it and cleared the marker")
        .containsEntry("name", "profile");
    assertThat(tardis.metrics().recoveredByForeground()).isEqualTo(2);
    assertThat(tardis.mode()).as("a per-document matter: the mode stays").isEqualTo(Mode.NORMAL);
  }

  /** The control of the test above: buffered without a marker, the other instance reads past the write. */
  @Test
  void withoutTheMarkerAnInstanceInNormalModeReadsPastABufferedWrite() throws Exception {
    Tardis tardis = instance(Technique.TARDIS, settings -> settings);
    Tardis failed = failedInstance(Tardis.Builder::withoutMarking);
    failed.write(key(6), ChangeSequence.of(set("name", "profile")));

    assertThat(tardis.read(key(6)).orElseThrow().fields())
        .as("stale: the database's value, not the buffered write")
        .containsEntry("name", "u6");
  }

  /**
   * The server holding a buffered document's marker restarts empty; an instance's replica repair notices, marks the
   * listed documents again and sends {@code pready}. Then the buffered document's grant says pending, so the miss
   * applies the buffered write before it reads.
   */
  @Test
  void aRestartedServerGetsTheMarkersBackBeforeItIsReady() throws Exception {
    Tardis tardis =
        instance(
            Technique.TARDIS, settings -> settings.replicaCheckInterval(Duration.ofMillis(50)));
    Tardis failed = failedInstance(settings -> settings);
    EntityKey buffered = keyOnServer(0, 0);
    failed.write(buffered, ChangeSequence.of(set("name", "buffered")));
    restartEmpty(0);

    awaitReady(0);
    assertThat(tardis.read(buffered).orElseThrow().fields()).containsEntry("name", "buffered");
    assertThat(name(buffered)).isEqualTo("buffered");
  }

  /**
   * The control of the test above: a restarted server told {@code pready} before the listed documents are marked
   * again answers "not pending", and a miss reads the database past the buffered write.
   */
  @Test
  void aServerToldReadyBeforeTheMarkersAreBackLetsAMissReadStale() throws Exception {
    // Neither instance restores markers, so nothing but the test opens the restarted server's gate.
    Tardis tardis = instance(Technique.TARDIS, Tardis.Builder::withoutRestoringMarkers);
    Tardis failed = failedInstance(Tardis.Builder::withoutRestoringMarkers);
    EntityKey buffered = keyOnServer(0, 0);
    failed.write(buffered, ChangeSequence.of(set("name", "buffered")));
    restartEmpty(0);
    cache.client.pendingMarkers().ready(server(0));

    assertThat(tardis.read(buffered).orElseThrow().fields())
        .as("stale")
        .containsEntry("name", "u" + buffered.id());
  }

  /** While a restarted server's gate is closed, TAR refuses even a clean document's miss; once open, serves it. */
  @Test
  void untilPreadyAClosedGateMakesEveryMissOfThatServerMaybe() throws Exception {
    EntityKey clean = keyOnServer(0, 1);
    restartEmpty(0);
    Tardis tar = instance(Technique.TAR, Tardis.Builder::withoutRestoringMarkers);

    assertThatThrownBy(() -> tar.read(clean)).isInstanceOf(TardisUnavailableException.class);
    cache.client.pendingMarkers().ready(server(0));
    assertThat(tar.read(clean).orElseThrow().fields()).containsEntry("name", "u" + clean.id());
  }

  private Tardis failedInstance(UnaryOperator<Tardis.Builder> settings) {
    Tardis failed =
        settings
            .apply(
                base(Technique.TARDIS).cache(cache.anotherClient()).store(faulty).drainThreads(0))
            .build();
    opened.add(failed);
    faulty.down.set(true);
    return failed;
  }

  private Tardis instance(Technique technique, UnaryOperator<Tardis.Builder> settings) {
    Tardis tardis =
        settings.apply(base(technique).cache(cache.anotherClient()).store(mysql)).build();
    opened.add(tardis);
    return tardis;
  }

  private static Tardis.Builder base(Technique technique) {
    return Tardis.builder()
        .solution(Solution.CONTEXTUAL)
        .technique(technique)
        .replicas(2)
        .partitions(PARTITIONS)
        .drainThreads(0)
        .checkInterval(Duration.ofMillis(50));
  }

  /** Waits until server {@code index} says its markers are complete. */
  private void awaitReady(int index) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!"1".equals(cache.client.servers().stats(server(index)).get("pending_markers_ready"))) {
      assertThat(System.nanoTime()).as("waiting for pready").isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  /** The {@code n}th document (from 0) whose {@code Doc:} key lives on server {@code index}. */
  private EntityKey keyOnServer(int index, int n) {
    int found = 0;
    for (int id = 0; id < DOCUMENTS; id++) {
      if (cache.serverOf(CachedDocuments.keyOf(key(id))) == index && found++ == n) {
        return key(id);
      }
    }
    throw new IllegalStateException("fewer than " + (n + 1) + " documents on server " + index);
  }

  private ServerAddress server(int index) {
    return cache.client.config().servers().get(index);
  }

  /** Stops server {@code index} and starts an empty one on its port: its markers and values are gone. */
  private void restartEmpty(int index) {
    IqServer old = cache.servers.get(index);
    int port = old.port();
    old.close();
    cache.servers.set(
        index,
        IqServer.start(IqServerConfig.builder().port(port).pinnedMemoryBytes(PINNED).build()));
  }

  private static EntityKey key(int id) {
    return UsersTable.key(id);
  }

  private long score(int id) {
    return UsersTable.score(mysql, id);
  }

  private String name(int id) {
    return UsersTable.name(mysql, id);
  }

  private String name(EntityKey key) {
    return name(((Number) key.id()).intValue());
  }
}
