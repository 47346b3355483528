package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 37, case 2: a write whose data-store statement outlasts its interval lease (a row-lock wait does this). A get
 * of an overlapping interval made after the lease lapsed reads the old row and caches it; the write must not return
 * leaving that result cached. Real MariaDB and an embedded IQ server; the statement is held on latches until the
 * get has done what the test needs, so nothing depends on timing luck: the lapse itself is waited for by the get,
 * whose Shared lease is granted the moment the writer's eXclusive one lapses.
 */
@ExtendWith(RealServers.class)
class SlowWriteIT {
  /**
   * Short enough that the writer's lease lapses while its statement waits, long enough that a get's fill registers
   * under its own lease on a busy machine (a fill slower than its lease is not registered, and the negative control
   * would then find nothing stale to serve).
   */
  private static final Duration LEASE_LIFETIME = Duration.ofSeconds(3);

  private static final ScoreRow OLD = new ScoreRow(7, 0);
  private static final ScoreRow NEW = new ScoreRow(7, 70);

  private EmbeddedIqServers cacheTier;
  private ScoreTable table;

  @BeforeEach
  void start(MySqlTestDatabase database) throws SQLException {
    cacheTier = EmbeddedIqServers.start(1);
    table = new ScoreTable(database).create(20);
  }

  @AfterEach
  void stop() throws Exception {
    cacheTier.close();
    table.close();
  }

  private RangeCache<Integer, ScoreRow> dendrite(
      WritePolicy policy, UnaryOperator<Dendrite.Builder<Integer, ScoreRow>> settings) {
    return settings
        .apply(
            Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
                .collection("scores")
                .domain("id")
                .range(0, 1_000)
                .cache(cacheTier.client)
                .writePolicy(policy)
                .intervalLeases(LEASE_LIFETIME, Duration.ofSeconds(30)))
        .buildRangeCache();
  }

  private List<ScoreRow> get(
      RangeCache<Integer, ScoreRow> dendrite, int lowerBound, int upperBound) {
    return dendrite.get(lowerBound, upperBound, table::range);
  }

  /** The write of {@link #NEW} whose statement waits for {@code release} once it has said it started. */
  private CompletableFuture<Void> slowWrite(
      RangeCache<Integer, ScoreRow> dendrite, CountDownLatch started, CountDownLatch release) {
    return CompletableFuture.runAsync(
        () ->
            dendrite.write(
                7,
                7,
                NEW,
                row -> {
                  started.countDown();
                  await(release);
                  table.set(row);
                },
                ScoreTable.putting(NEW)));
  }

  @ParameterizedTest
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_AROUND", "WRITE_THROUGH"})
  void aGetCachedAfterTheWritersLeaseLapsedIsNotServedAfterTheWrite(WritePolicy policy)
      throws Exception {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(policy, builder -> builder)) {
      assertThat(get(dendrite, 0, 9)).contains(OLD); // an entry the write finds and handles
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Void> write = slowWrite(dendrite, started, release);
      await(started);

      // Waits for the writer's eXclusive lease to lapse, then queries the row the statement has not
      // changed yet
      // and caches it under a key the writer never saw.
      assertThat(get(dendrite, 5, 14)).as("the get ran before the statement").contains(OLD);
      release.countDown();
      write.get(30, TimeUnit.SECONDS);

      assertThat(get(dendrite, 5, 14))
          .as("a get after the write returned (%s, lease %s)", policy, LEASE_LIFETIME)
          .contains(NEW);
      assertThat(get(dendrite, 0, 9)).contains(NEW);
      assertThat(get(dendrite, 7, 7)).containsExactly(NEW);
      assertThat(dendrite.metrics().writesOutlivingLease()).isEqualTo(1);
    }
  }

  /**
   * The race the repair must win: a get whose Shared lease was granted after the writer's lapsed has read the old row
   * and is still filling when the statement ends. The writer must wait for that fill to register before it drops
   * what overlaps it, or the fill registers after the drop. The get's query holds the fill until the statement has
   * ended and the writer is either waiting in its repair or has returned.
   */
  @ParameterizedTest
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_AROUND", "WRITE_THROUGH"})
  void aFillStillRunningWhenTheStatementEndsIsDroppedOnceItRegisters(WritePolicy policy)
      throws Exception {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(policy, builder -> builder)) {
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch queried = new CountDownLatch(1);
      CountDownLatch statementDone = new CountDownLatch(1);
      Thread[] writer = new Thread[1];
      @SuppressWarnings("unchecked")
      CompletableFuture<Void>[] write = new CompletableFuture[1];
      write[0] =
          CompletableFuture.runAsync(
              () -> {
                writer[0] = Thread.currentThread();
                dendrite.write(
                    7,
                    7,
                    NEW,
                    row -> {
                      started.countDown();
                      await(queried);
                      table.set(row);
                      statementDone.countDown();
                    },
                    ScoreTable.putting(NEW));
              });
      await(started);

      List<ScoreRow> filled =
          dendrite.get(
              5,
              14,
              (lb, ub) -> {
                List<ScoreRow> rows = table.range(lb, ub);
                queried.countDown();
                await(statementDone);
                awaitRepairingOrDone(writer[0], write[0]);
                return rows;
              });
      assertThat(filled).as("the fill read before the statement").contains(OLD);
      write[0].get(30, TimeUnit.SECONDS);

      assertThat(get(dendrite, 5, 14))
          .as("a get after the write returned (%s)", policy)
          .contains(NEW);
      assertThat(dendrite.metrics().writesOutlivingLease()).isEqualTo(1);
    }
  }

  /**
   * The negative control: with the repair switched off, the first test's stale read comes back, so that test can
   * fail.
   */
  @ParameterizedTest
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_AROUND", "WRITE_THROUGH"})
  void withoutTheRepairTheGetCachedAfterTheLapseIsServedStale(WritePolicy policy) throws Exception {
    try (RangeCache<Integer, ScoreRow> dendrite =
        dendrite(policy, Dendrite.Builder::withoutLapsedWriteRepairForTesting)) {
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Void> write = slowWrite(dendrite, started, release);
      await(started);
      assertThat(get(dendrite, 5, 14)).contains(OLD);
      release.countDown();
      write.get(30, TimeUnit.SECONDS);

      assertThat(table.range(7, 7)).as("the data store has the write").containsExactly(NEW);
      assertThat(get(dendrite, 5, 14)).as("served from the cache, stale").contains(OLD);
      assertThat(dendrite.metrics().misses()).isEqualTo(1);
    }
  }

  /** Waits until {@code writer} waits for fills in its repair, or has finished its write. */
  private static void awaitRepairingOrDone(Thread writer, CompletableFuture<Void> write) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (write.isDone()
          || Arrays.stream(writer.getStackTrace())
              .anyMatch(frame -> frame.getMethodName().equals("awaitSharedLeasesGrantedNow"))) {
        return;
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("the writer neither repaired nor finished: " + writer.getState());
  }

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(30, TimeUnit.SECONDS)).as("latch released").isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
