package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.FenceToken;
import io.dendrite.core.NotAppliedException;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.tardis.Tardis;
import io.dendrite.tardis.TardisMetrics;
import io.dendrite.tardis.TardisRanges;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link LateOwnerStatementIT} with TARDIS as the ranges' outage tolerance: a former owner's data-store statement
 * that arrives after a takeover. Owner A passes its last ownership check and then waits, inside the data store's
 * apply, on a latch (a pool checkout, a GC pause); meanwhile it is cut off from ZooKeeper, B takes the range over
 * (raising its fence in the table) and caches the row. Then A's statement goes on and is fenced out.
 *
 * <p>TARDIS teleports a write whose statement the data store could not take, so a refusal taken for an outage
 * would put a former owner's write into the range's teleported writes behind the new owner's back: acknowledged to
 * A's caller, applied later by B's recovery, while B serves the row it cached without it. The refusal must end the
 * write as not applied, with nothing teleported.
 *
 * <p>The checks can fail: with TARDIS's rethrow of the refusal removed, the write ends outcome unknown (its teleport
 * is fenced out in the cache tier by B's fence). The negative control of the store fence itself, a late statement
 * that lands and leaves B's cached row stale, is {@link LateOwnerStatementIT}'s
 * ({@code withoutTheStoreFenceTheLateStatementLeavesTheCachedRowStale}); repeating it here would add its 20 s to
 * dev/test for the same mechanism.
 */
@ExtendWith(RealServers.class)
class LateTardisOwnerStatementIT {
  private static final Duration SESSION = Duration.ofSeconds(2);
  private static final Duration LONG = Duration.ofSeconds(60);
  private static final int ROW = 3;

  @Test
  void aFencedOutStatementOfAFormerOwnerIsNotTeleportedAndLeavesNothingStale(
      MySqlTestDatabase database, ZooKeeperAddress zk) throws Exception {
    Outcome outcome = lateWrite(database, zk);
    // The data store refused the statement and applied nothing, and TARDIS did not take that for
    // an outage: the write is known not applied. Taken for an outage, its teleport is fenced out in
    // the cache tier instead, and the write ends outcome unknown (tried with TardisCore's rethrow
    // removed).
    assertThat(outcome.write()).as("A's write, refused by the fence").startsWith("not applied");
    assertThat(outcome.stored()).as("A's statement did not land").isZero();
    assertThat(outcome.cached()).as("what B serves for row 3").isEqualTo(outcome.stored());
    assertThat(outcome.teleportedAtB())
        .as("nothing of A's was teleported into the range B now owns")
        .isZero();
  }

  /**
   * How A's write ended, row 3's val in the table and in what B serves, and the writes B's TARDIS found teleported
   * in the range (buffered now, or recovered since it took the range over).
   */
  private record Outcome(String write, long stored, long cached, long teleportedAtB) {}

  private static Outcome lateWrite(MySqlTestDatabase database, ZooKeeperAddress zk)
      throws Exception {
    String[] hostPort = zk.connectString().split(":");
    try (Scores table = new Scores(database).create(10);
        MySqlStore store = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
        EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        CuttableProxy zkOfA = new CuttableProxy(hostPort[0], Integer.parseInt(hostPort[1]))) {
      CountDownLatch applying = new CountDownLatch(1);
      CountDownLatch goOn = new CountDownLatch(1);
      Member a =
          member(
              table,
              cache.client,
              pausing(store, applying, goOn),
              store,
              "127.0.0.1:" + zkOfA.port(),
              zk.service(),
              "a");
      try (PartitionedDendrite<Integer, Scores.Score> dendriteOfA = a.dendrite()) {
        await(() -> dendriteOfA.servedRanges().size() == 1);
        CompletableFuture<String> write =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    dendriteOfA.write("change", ROW, ROW, BufferedScores.set(ROW, 7));
                    return "done";
                  } catch (NotAppliedException refused) {
                    return "not applied (" + refused.getClass().getSimpleName() + ")";
                  } catch (RuntimeException failed) {
                    return failed.getClass().getSimpleName();
                  }
                });
        assertThat(applying.await(LONG.toSeconds(), TimeUnit.SECONDS))
            .as("A reached its statement")
            .isTrue();

        zkOfA.blackHole();
        try (IqClient bCache = cache.anotherClient()) {
          Member b = member(table, bCache, store, store, zk.connectString(), zk.service(), "b");
          try (PartitionedDendrite<Integer, Scores.Score> dendriteOfB = b.dendrite()) {
            await(() -> dendriteOfB.servedRanges().size() == 1);
            assertThat(val(dendriteOfB.get("range", ROW, ROW)))
                .as("B's first read, cached")
                .isZero();

            goOn.countDown();
            String ended = write.get(LONG.toSeconds(), TimeUnit.SECONDS);
            // B's recovery workers look for teleported writes every 200 ms: a write A teleported
            // would be
            // recovered (or still listed) well within this.
            Thread.sleep(2_000);
            TardisMetrics atB = b.tolerance().total();
            Outcome outcome =
                new Outcome(
                    ended,
                    stored(database),
                    val(dendriteOfB.get("range", ROW, ROW)),
                    atB.bufferedDocuments() + atB.recovered());
            // Refused rather than black-holed: A's close gives up on ZooKeeper at once instead of
            // waiting out its connection timeout.
            zkOfA.cut();
            return outcome;
          }
        }
      }
    }
  }

  /** A member of the service: its Dendrite and the TARDIS guards of the ranges it owns. */
  private record Member(
      PartitionedDendrite<Integer, Scores.Score> dendrite, TardisRanges tolerance) {}

  /**
   * Member {@code name} of the service, writing scores through TARDIS to {@code store}; {@code fence} raises and
   * checks the ranges' fences in the table (the same store, unpaused).
   */
  private static Member member(
      Scores table,
      IqClient cache,
      DataStore store,
      MySqlStore fence,
      String zooKeeper,
      String service,
      String name) {
    ManyProcesses processes =
        ManyProcesses.overZooKeeper(zooKeeper, service)
            .storeFence(fence)
            .ranges(1)
            .forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback()) // one machine
            .member(name)
            .sessionTimeout(SESSION)
            .requestTimeout(Duration.ofSeconds(3));
    TardisRanges tolerance =
        TardisRanges.of(
            Tardis.builder()
                .cache(cache)
                .store(store)
                .replicas(1)
                .partitions(8)
                .checkInterval(Duration.ofMillis(200)));
    PartitionedDendrite<Integer, Scores.Score> dendrite =
        (PartitionedDendrite<Integer, Scores.Score>)
            Dendrite.builder(DomainType.INTEGER, Scores.CODEC)
                .collection("scores")
                .domain("id")
                .range(0, 9)
                .cache(cache)
                .writePolicy(WritePolicy.WRITE_THROUGH)
                .outageTolerance(tolerance)
                .query("range", table::range)
                .command("change", BufferedScores.changes())
                .deployment(processes)
                .build();
    return new Member(dendrite, tolerance);
  }

  /**
   * {@code store}, whose first statement waits for {@code goOn} after telling {@code applying} it got there: the
   * window between an owner's last check and its statement, held open.
   */
  private static DataStore pausing(DataStore store, CountDownLatch applying, CountDownLatch goOn) {
    return new DataStore() {
      @Override
      public void apply(List<EntityChanges> batch) {
        pause();
        store.apply(batch);
      }

      @Override
      public void apply(List<EntityChanges> batch, FenceToken owner) {
        pause();
        store.apply(batch, owner);
      }

      private void pause() {
        if (applying.getCount() == 0) {
          return; // only the first statement waits
        }
        applying.countDown();
        try {
          if (!goOn.await(LONG.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException("never told to go on");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }

      @Override
      public Optional<Entity> read(EntityKey key) {
        return store.read(key);
      }

      @Override
      public List<Entity> readRange(
          String collection, String field, Object lowerBound, Object upperBound) {
        return store.readRange(collection, field, lowerBound, upperBound);
      }

      @Override
      public void close() {}
    };
  }

  private static long val(List<Scores.Score> rows) {
    return rows.get(0).val();
  }

  private static long stored(MySqlTestDatabase database) throws Exception {
    try (Connection connection = database.connect();
        PreparedStatement select =
            connection.prepareStatement("SELECT val FROM scores WHERE id = " + ROW);
        ResultSet row = select.executeQuery()) {
      row.next();
      return row.getLong(1);
    }
  }

  private static void await(BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + LONG.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + LONG);
      }
      Thread.sleep(20);
    }
  }
}
