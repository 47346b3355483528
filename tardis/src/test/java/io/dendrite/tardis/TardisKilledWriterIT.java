package io.dendrite.tardis;

import static io.dendrite.tardis.UsersTable.key;
import static io.dendrite.tardis.UsersTable.score;
import static io.dendrite.writeback.change.Change.inc;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.ChildJvm;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A TARDIS writer killed (SIGKILL) between its database write and its cache commit (issue 37): it held its
 * document's Q-refresh lease; the lease lapses on the server, and the server used to keep the old copy, which every
 * later read then served, older than the database. Now the copy goes with the lapsed lease and the next read loads
 * the database's row.
 */
@ExtendWith(RealServers.class)
class TardisKilledWriterIT {

  /** The server's lease lifetime: short, so the test outlives the lease the killed writer left. */
  private static final Duration LEASES = Duration.ofSeconds(2);

  @Test
  void aWriterKilledAfterItsDatabaseWriteLeavesNoOldCopy(MySqlTestDatabase database)
      throws Exception {
    assertThat(scoreReadAfterAKilledWrite(database, true)).isEqualTo(1L);
  }

  /** The negative control: a server that keeps the value on a lapse, as before, serves the old copy. */
  @Test
  void aServerThatKeepsTheValueOnALapseServesTheOldCopy(MySqlTestDatabase database)
      throws Exception {
    assertThat(scoreReadAfterAKilledWrite(database, false)).isEqualTo(0L);
  }

  /**
   * Runs {@link WriterChild} (it reads document 1, cached with score 0, then increments it and is killed once the
   * database has the increment), waits past the lease lifetime, and reads document 1 through a new TARDIS instance.
   */
  private static long scoreReadAfterAKilledWrite(MySqlTestDatabase database, boolean lapseDrops)
      throws Exception {
    try (MySqlStore mysql = UsersTable.seed(database, 4, "");
        EmbeddedIqServers cacheTier =
            EmbeddedIqServers.builder()
                .count(1)
                .leaseLifetime(LEASES)
                .server(server -> server.lapseDropsValue(lapseDrops))
                .start()) {
      try (ChildJvm writer =
          ChildJvm.start(
              WriterChild.class.getName(),
              List.of("-Xmx128m"),
              List.of(database.jdbcUrl(), cacheTier.addresses()))) {
        writer.awaitLine("applied"::equals, Duration.ofSeconds(90));
        assertThat(score(mysql, 1)).as("the database has the increment").isEqualTo(1);
        writer.kill();
      }
      // The lease was granted before the database write, so it lapses at most LEASES after
      // "applied".
      Thread.sleep(LEASES.plusSeconds(1).toMillis());
      try (Tardis reader = instance(cacheTier.client, mysql).build()) {
        return ((Number) reader.read(key(1)).orElseThrow().fields().get("score")).longValue();
      }
    }
  }

  private static Tardis.Builder instance(IqClient cache, DataStore store) {
    return Tardis.builder()
        .replicas(1)
        .cache(cache)
        .store(store)
        .technique(Technique.TARDIS)
        .partitions(4)
        .drainThreads(0)
        .checkInterval(Duration.ofMillis(100));
  }

  /**
   * Reads document 1 through TARDIS (its copy is cached), then increments its score: the database write commits,
   * {@code applied} is printed, and the writer blocks before its cache commit until it is killed. Arguments: the
   * database's JDBC URL, the cache servers.
   */
  public static final class WriterChild {
    public static void main(String[] args) throws Exception {
      IqClient cache = IqClient.builder().servers(args[1].split(",")).build();
      MySqlStore mysql = MySqlStore.open(args[0], 4, Duration.ofSeconds(10));
      Tardis tardis = instance(cache, new StoppingAfterApply(mysql)).build();
      if (score(mysql, 1) != 0 || tardis.read(key(1)).isEmpty()) {
        throw new IllegalStateException("document 1 should start cached at score 0");
      }
      tardis.write(key(1), ChangeSequence.of(inc("score", 1)));
    }
  }

  /** Applies to the store, then prints {@code applied} and blocks forever: a writer killed after its database write. */
  private record StoppingAfterApply(DataStore store) implements DataStore {
    @Override
    public void apply(List<EntityChanges> batch) {
      store.apply(batch);
      System.out.println("applied");
      try {
        Thread.sleep(Long.MAX_VALUE);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public Optional<Entity> read(EntityKey key) {
      return store.read(key);
    }

    @Override
    public List<Entity> readRange(String collection, String field, Object lower, Object upper) {
      return store.readRange(collection, field, lower, upper);
    }

    @Override
    public void close() {
      store.close();
    }
  }
}
