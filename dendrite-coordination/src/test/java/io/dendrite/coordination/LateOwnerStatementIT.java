package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import com.mysql.cj.jdbc.MysqlDataSource;
import io.dendrite.core.CacheUpdate;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.SqlFence;
import io.dendrite.core.SqlWriteCommand;
import io.dendrite.core.WritePolicy;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A former owner's data-store statement that lands after a takeover (issue 37). Owner A passes its last ownership
 * check and then waits, inside the write command, on a latch (as a pool checkout, a GC pause or a row-lock wait
 * would make it wait); meanwhile it is cut off from ZooKeeper, B takes the range over and caches the row. Then A's
 * statement goes on. With the data store fenced ({@code storeFence}), B raised the range's fence in the table
 * {@code dendrite_fences} before it read anything, and A's transaction, which checks it last, is rolled back.
 */
@ExtendWith(RealServers.class)
class LateOwnerStatementIT {
  private static final Duration SESSION = Duration.ofSeconds(2);
  private static final Duration LONG = Duration.ofSeconds(60);

  @Test
  void aLateStatementOfAFormerOwnerLeavesNoStaleCachedResultAndIsNotReportedAsDone(
      MySqlTestDatabase database, ZooKeeperAddress zk) throws Exception {
    Outcome outcome = lateWrite(database, zk, true);
    assertThat(outcome.cached())
        .as("what B serves for row 3 against the table (A's write ended with %s)", outcome.write())
        .isEqualTo(outcome.stored());
    if (outcome.write().equals("done")) {
      assertThat(outcome.stored()).as("a write reported done is in the table").isEqualTo(7);
    }
  }

  /**
   * The negative control: the data-store fence neither raised nor carried. A's statement lands after B cached the
   * row, and B serves the old value; the write is not reported done (its cache commit was fenced out).
   */
  @Test
  void withoutTheStoreFenceTheLateStatementLeavesTheCachedRowStale(
      MySqlTestDatabase database, ZooKeeperAddress zk) throws Exception {
    Outcome outcome = lateWrite(database, zk, false);
    assertThat(outcome.stored()).as("A's late statement landed").isEqualTo(7);
    assertThat(outcome.cached()).as("B serves the row it cached before").isZero();
    assertThat(outcome.write()).isEqualTo("OutcomeUnknownException");
  }

  /** What the late write did: how A's write ended, row 3's val in the table, and in what B serves. */
  private record Outcome(String write, long stored, long cached) {}

  private static Outcome lateWrite(MySqlTestDatabase database, ZooKeeperAddress zk, boolean fenced)
      throws Exception {
    MysqlDataSource connections = new MysqlDataSource();
    connections.setURL(database.jdbcUrl());
    SqlFence fence = SqlFence.of(connections);
    String[] hostPort = zk.connectString().split(":");
    try (Scores table = new Scores(database).create(10);
        EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        CuttableProxy zkOfA = new CuttableProxy(hostPort[0], Integer.parseInt(hostPort[1]))) {
      CountDownLatch applying = new CountDownLatch(1);
      CountDownLatch goOn = new CountDownLatch(1);
      try (PartitionedDendrite<Integer, Scores.Score> a =
          service(
              table,
              cache.client,
              "127.0.0.1:" + zkOfA.port(),
              zk.service(),
              "a",
              fence,
              fenced,
              pausing(fence, applying, goOn))) {
        await(() -> a.servedRanges().size() == 1);
        CompletableFuture<String> write =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    a.write("set", 3, 3, new Scores.SetVal(3, 7));
                    return "done";
                  } catch (RuntimeException failed) {
                    return failed.getClass().getSimpleName();
                  }
                });
        assertThat(applying.await(LONG.toSeconds(), TimeUnit.SECONDS))
            .as("A reached its statement")
            .isTrue();

        zkOfA.blackHole();
        try (var bCache = cache.anotherClient();
            PartitionedDendrite<Integer, Scores.Score> b =
                service(
                    table,
                    bCache,
                    zk.connectString(),
                    zk.service(),
                    "b",
                    fence,
                    fenced,
                    pausing(fence, new CountDownLatch(1), null))) {
          await(() -> b.servedRanges().size() == 1);
          assertThat(val(b.get("range", 3, 3))).as("B's first read, cached").isZero();

          goOn.countDown();
          String ended = write.get(LONG.toSeconds(), TimeUnit.SECONDS);
          Outcome outcome = new Outcome(ended, stored(database), val(b.get("range", 3, 3)));
          // Refused rather than black-holed: A's close gives up on ZooKeeper at once instead of
          // waiting out its connection timeout.
          zkOfA.cut();
          return outcome;
        }
      }
    }
  }

  /** Member {@code member} of the service, writing scores with {@code set}. */
  private static PartitionedDendrite<Integer, Scores.Score> service(
      Scores table,
      io.dendrite.iq.client.IqClient cache,
      String zooKeeper,
      String service,
      String member,
      SqlFence fence,
      boolean fenced,
      SqlWriteCommand<Integer, Scores.Score, Scores.SetVal> set) {
    ManyProcesses processes =
        ManyProcesses.overZooKeeper(zooKeeper, service)
            .storeFence(fence)
            .ranges(1)
            .forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback()) // one machine
            .member(member)
            .sessionTimeout(SESSION)
            .requestTimeout(Duration.ofSeconds(3));
    if (!fenced) {
      processes.storeFenceOffForTesting();
    }
    return (PartitionedDendrite<Integer, Scores.Score>)
        Dendrite.builder(DomainType.INTEGER, Scores.CODEC)
            .collection("scores")
            .domain("id")
            .range(0, 9)
            .cache(cache)
            .writePolicy(WritePolicy.WRITE_THROUGH)
            .query("range", table::range)
            .command("set", set)
            .deployment(processes)
            .build();
  }

  /**
   * Scores' set, whose statement waits for {@code goOn} (when given) after telling {@code applying} it got there:
   * the window between an owner's last check and its statement, held open.
   */
  private static SqlWriteCommand<Integer, Scores.Score, Scores.SetVal> pausing(
      SqlFence fence, CountDownLatch applying, CountDownLatch goOn) {
    return new SqlWriteCommand<>() {
      @Override
      public SqlFence fence() {
        return fence;
      }

      @Override
      public Class<Scores.SetVal> type() {
        return Scores.SetVal.class;
      }

      @Override
      public byte[] encode(Scores.SetVal write) {
        return (write.id() + " " + write.val()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      }

      @Override
      public Scores.SetVal decode(byte[] bytes) {
        String[] parts = new String(bytes, java.nio.charset.StandardCharsets.UTF_8).split(" ");
        return new Scores.SetVal(Integer.parseInt(parts[0]), Long.parseLong(parts[1]));
      }

      @Override
      public void apply(Scores.SetVal write, Connection connection) throws SQLException {
        applying.countDown();
        try {
          if (goOn != null && !goOn.await(LONG.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException("never told to go on");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
        try (PreparedStatement upsert =
            connection.prepareStatement(
                "INSERT INTO scores VALUES (?, ?, 0) ON DUPLICATE KEY UPDATE val = VALUES(val)")) {
          upsert.setInt(1, write.id());
          upsert.setLong(2, write.val());
          upsert.executeUpdate();
        }
      }

      @Override
      public CacheUpdate<Integer, Scores.Score> cacheUpdate(Scores.SetVal write) {
        return Scores.setting(write.id(), write.val());
      }
    };
  }

  private static long val(List<Scores.Score> rows) {
    return rows.get(0).val();
  }

  private static long stored(MySqlTestDatabase database) throws Exception {
    try (Connection connection = database.connect();
        PreparedStatement select =
            connection.prepareStatement("SELECT val FROM scores WHERE id = 3");
        ResultSet row = select.executeQuery()) {
      row.next();
      return row.getLong(1);
    }
  }

  private static void await(java.util.function.BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + LONG.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + LONG);
      }
      Thread.sleep(20);
    }
  }
}
