package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Dendrite's read and write paths against real MariaDB and two embedded IQ servers. */
@ExtendWith(RealServers.class)
class DendriteIT {
  private EmbeddedIqServers cacheTier;
  private ScoreTable table;
  private final AtomicInteger queries = new AtomicInteger();

  @BeforeEach
  void start(MySqlTestDatabase database) throws SQLException {
    cacheTier = EmbeddedIqServers.start(2);
    table = new ScoreTable(database).create(100);
  }

  @AfterEach
  void stop() throws Exception {
    cacheTier.close();
    table.close();
  }

  private RangeCache<Integer, ScoreRow> dendrite(WritePolicy policy, double beta) {
    return dendrite(builder -> builder.writePolicy(policy).maxSharedFraction(beta));
  }

  private RangeCache<Integer, ScoreRow> dendrite(
      UnaryOperator<Dendrite.Builder<Integer, ScoreRow>> settings) {
    return dendrite(ScoreRow.CODEC, settings);
  }

  private RangeCache<Integer, ScoreRow> dendrite(
      RowCodec<Integer, ScoreRow> codec,
      UnaryOperator<Dendrite.Builder<Integer, ScoreRow>> settings) {
    return settings
        .apply(
            Dendrite.builder(DomainType.INTEGER, codec)
                .collection("scores")
                .domain("id")
                .range(0, 1_000)
                .cache(cacheTier.client))
        .buildRangeCache();
  }

  private List<ScoreRow> get(
      RangeCache<Integer, ScoreRow> dendrite, int lowerBound, int upperBound) {
    return dendrite.get(
        lowerBound,
        upperBound,
        (lb, ub) -> {
          queries.incrementAndGet();
          return table.range(lb, ub);
        });
  }

  private void put(RangeCache<Integer, ScoreRow> dendrite, ScoreRow row) {
    dendrite.write(row.id(), row.id(), row, table::set, ScoreTable.putting(row));
  }

  @Test
  void aMissIsCachedAndTheNextGetIsAHitInOneRoundTrip() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_AROUND, 1.0)) {
      assertThat(get(dendrite, 10, 14))
          .extracting(ScoreRow::id)
          .containsExactly(10, 11, 12, 13, 14);
      assertThat(get(dendrite, 10, 14)).hasSize(5);

      assertThat(queries).hasValue(1);
      DendriteMetrics metrics = dendrite.metrics();
      assertThat(metrics.hits()).isEqualTo(1);
      assertThat(metrics.misses()).isEqualTo(1);
      assertThat(metrics.nearHits()).as("from the near cache").isEqualTo(1);
      assertThat(metrics.roundTripsPerHit()).isEqualTo(0.0);
      assertThat(dendrite.cachedEntries()).isEqualTo(1);
    }
    // Without the near cache, a hit is one round trip to the cache servers.
    try (RangeCache<Integer, ScoreRow> dendrite =
        dendrite(builder -> builder.writePolicy(WritePolicy.WRITE_AROUND).nearCache(false))) {
      // A range the first did not cache: this one rebuilt the first's entries from the log.
      get(dendrite, 20, 24);
      assertThat(get(dendrite, 20, 24)).hasSize(5);
      DendriteMetrics metrics = dendrite.metrics();
      assertThat(metrics.hits()).isEqualTo(1);
      assertThat(metrics.nearHits()).isZero();
      assertThat(metrics.roundTripsPerHit()).isEqualTo(1.0);
    }
  }

  @Test
  void queriesAndWriteCommandsAreBoundByNameWhenBuilt() throws SQLException {
    RowCodec<Integer, ScoreRow> rows =
        RowCodec.ofRecord(ScoreRow.class, ScoreRow::id, ScoreRow::id);
    try (Dendrite<Integer, ScoreRow> dendrite =
        dendrite(
            rows,
            builder ->
                builder
                    .writePolicy(WritePolicy.WRITE_THROUGH)
                    .query(
                        "scores",
                        (lb, ub) -> {
                          queries.incrementAndGet();
                          return table.range(lb, ub);
                        })
                    .command(
                        "set",
                        WriteCommand.of(
                            ScoreRow.class, table::set, row -> CacheUpdate.putting(rows, row))))) {
      assertThat(dendrite.get("scores", 0, 9)).hasSize(10);
      dendrite.write("set", 5, 5, new ScoreRow(5, 999));
      assertThat(dendrite.get("scores", 0, 9)).contains(new ScoreRow(5, 999)).hasSize(10);
      assertThat(queries).hasValue(1); // the write refreshed the cached result: no second query
      assertThat(table.range(5, 5)).containsExactly(new ScoreRow(5, 999));

      assertThatThrownBy(() -> dendrite.get("top", 0, 9))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no query named \"top\" on scores.id; bound: [scores]");
      assertThatThrownBy(() -> dendrite.write("delete", 5, 5, new ScoreRow(5, 0)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no write command named \"delete\" on scores.id; bound: [set]");
      assertThatThrownBy(() -> dendrite.write("set", 5, 5, "5:0"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(
              "write command \"set\" takes a "
                  + ScoreRow.class.getName()
                  + ", got a java.lang.String");
      assertThat(table.range(5, 5)).containsExactly(new ScoreRow(5, 999));
    }
  }

  /** A failed named write says whether it was applied, whatever went wrong, and leaves no stale result cached. */
  @Test
  void aFailedNamedWriteSaysNotAppliedOrOutcomeUnknown() throws SQLException {
    RowCodec<Integer, ScoreRow> rows =
        RowCodec.ofRecord(ScoreRow.class, ScoreRow::id, ScoreRow::id);
    try (Dendrite<Integer, ScoreRow> dendrite =
        dendrite(
            rows,
            builder ->
                builder
                    .writePolicy(WritePolicy.WRITE_THROUGH)
                    .query("scores", (lb, ub) -> table.range(lb, ub))
                    .command(
                        "setThenFail",
                        WriteCommand.of(
                            ScoreRow.class,
                            row -> {
                              table.set(row);
                              throw new SQLException("the connection dropped during the commit");
                            },
                            row -> CacheUpdate.putting(rows, row)))
                    .command(
                        "refuse",
                        WriteCommand.of(
                            ScoreRow.class,
                            row -> {
                              throw new NotAppliedException("a negative score", null);
                            },
                            row -> CacheUpdate.putting(rows, row))))) {
      dendrite.get("scores", 0, 9);

      assertThatThrownBy(() -> dendrite.write("setThenFail", 5, 5, new ScoreRow(5, 999)))
          .isInstanceOf(OutcomeUnknownException.class)
          .hasCauseInstanceOf(DataStoreException.class)
          .hasMessageContaining("the connection dropped during the commit");
      assertThat(dendrite.get("scores", 0, 9))
          .as("the cache holds what the database holds")
          .contains(new ScoreRow(5, 999));

      assertThatThrownBy(() -> dendrite.write("refuse", 6, 6, new ScoreRow(6, -1)))
          .isExactlyInstanceOf(NotAppliedException.class)
          .hasMessage("a negative score");
      assertThat(dendrite.get("scores", 6, 6)).doesNotContain(new ScoreRow(6, -1));
    }
  }

  @Test
  void writeAroundDeletesEveryOverlappingEntry() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_AROUND, 1.0)) {
      get(dendrite, 0, 9);
      get(dendrite, 5, 14);
      get(dendrite, 20, 29);

      long awaited = cacheTier.client.threadCounters().roundTrips();
      long requests = cacheTier.client.threadCounters().requests();
      long writes = cacheTier.client.threadCounters().writes();
      put(dendrite, new ScoreRow(7, 70));
      assertThat(cacheTier.client.threadCounters().roundTrips() - awaited)
          .as("the quarantines of both entries together, then delete-and-release")
          .isEqualTo(2);
      CacheKeys<Integer> keys = new CacheKeys<>("scores", "id", DomainType.INTEGER);
      long servers =
          Stream.of(Interval.of(0, 9), Interval.of(5, 14))
              .map(
                  entry ->
                      cacheTier
                          .client
                          .replicaPlacement()
                          .serversFor(keys.entryKey(entry), 1)
                          .get(0))
              .distinct()
              .count();
      assertThat(cacheTier.client.threadCounters().requests() - requests).isEqualTo(2 + servers);
      assertThat(cacheTier.client.threadCounters().writes() - writes)
          .as(
              "each step in one write per server it touches: the two quarantines, then delete-and-release")
          .isEqualTo(2 * servers);

      assertThat(dendrite.cachedEntries()).isEqualTo(1);
      assertThat(get(dendrite, 0, 9)).contains(new ScoreRow(7, 70));
      assertThat(get(dendrite, 5, 14)).contains(new ScoreRow(7, 70));
      assertThat(queries).hasValue(5);
      assertThat(dendrite.metrics().entriesInvalidated()).isEqualTo(2);
    }
  }

  @Test
  void writeThroughUpdatesEveryOverlappingEntryInPlace() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_THROUGH, 1.0)) {
      get(dendrite, 0, 9);
      get(dendrite, 5, 14);

      put(dendrite, new ScoreRow(7, 70));
      dendrite.write(8, 8, 8, table::remove, ScoreTable.removing(8));

      assertThat(get(dendrite, 0, 9))
          .contains(new ScoreRow(7, 70))
          .extracting(ScoreRow::id)
          .doesNotContain(8);
      assertThat(get(dendrite, 5, 14)).contains(new ScoreRow(7, 70)).hasSize(9);
      assertThat(queries).hasValue(2);
      assertThat(dendrite.metrics().entriesRefreshed()).isEqualTo(4);
    }
  }

  @Test
  void withChangeRecordsAWriteAppendsToEachEntryAndRewritesItEverySixteenChanges() {
    CacheKeys<Integer> keys = new CacheKeys<>("scores", "id", DomainType.INTEGER);
    ResultSetCodec<ScoreRow> codec = new ResultSetCodec<>(ScoreRow.CODEC);
    try (RangeCache<Integer, ScoreRow> dendrite =
        dendrite(
            builder ->
                builder
                    .writePolicy(WritePolicy.WRITE_THROUGH)
                    .changeRecords(ScoreTable.SET_RECORDS)
                    // With it, the write keeps both results in it alone (NearCacheIT).
                    .nearCache(false))) {
      get(dendrite, 0, 9);
      get(dendrite, 5, 14);

      long awaited = cacheTier.client.threadCounters().roundTrips();
      dendrite.write(7, 7, new ScoreRow(7, 70), table::set, null);
      assertThat(cacheTier.client.threadCounters().roundTrips() - awaited)
          .as("both entries' appends together, then the commit")
          .isEqualTo(2);

      ResultSetCodec.Decoded<ScoreRow> cached =
          codec.decode(cacheTier.client.get(keys.entryKey(Interval.of(0, 9))).orElseThrow().data());
      assertThat(cached.changes())
          .as("the write appended its change, the rows are as filled")
          .hasSize(1);
      assertThat(cached.rows()).contains(new ScoreRow(7, 0));
      assertThat(get(dendrite, 0, 9)).contains(new ScoreRow(7, 70)).hasSize(10);
      assertThat(get(dendrite, 5, 14)).contains(new ScoreRow(7, 70)).hasSize(10);

      dendrite.write(
          8, 8, 8, table::remove, ScoreTable.removing(8)); // not a record: rewrites both entries
      assertThat(
              codec
                  .decode(
                      cacheTier.client.get(keys.entryKey(Interval.of(5, 14))).orElseThrow().data())
                  .changes())
          .isEmpty();

      for (int version = 1; version <= 20; version++) {
        dendrite.write(9, 9, new ScoreRow(9, version), table::set, null);
      }
      // 16 appends, the 17th write rewrites the entry whole, then 3 more appends
      assertThat(
              codec
                  .decode(
                      cacheTier.client.get(keys.entryKey(Interval.of(0, 9))).orElseThrow().data())
                  .changes())
          .hasSize(3);
      assertThat(get(dendrite, 0, 9)).contains(new ScoreRow(7, 70), new ScoreRow(9, 20)).hasSize(9);
      assertThat(get(dendrite, 5, 14)).contains(new ScoreRow(9, 20)).hasSize(9);
      assertThat(queries).as("every get after the first two was a hit").hasValue(2);
    }
  }

  @Test
  void aChangeWithoutACacheUpdateIsRefusedUnlessChangeRecordsTakeIt() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_THROUGH, 1.0)) {
      assertThatThrownBy(() -> dendrite.write(7, 7, new ScoreRow(7, 70), table::set, null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("cacheUpdate is required");
    }
    try (RangeCache<Integer, ScoreRow> dendrite =
        dendrite(
            builder ->
                builder
                    .writePolicy(WritePolicy.WRITE_THROUGH)
                    .changeRecords(ScoreTable.SET_RECORDS))) {
      assertThatThrownBy(() -> dendrite.write(7, 7, 7, table::remove, null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("not a io.dendrite.core.ScoreRow");
    }
  }

  @Test
  void aGetInsideACachedIntervalIsAnsweredFromIt() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_AROUND, 1.0)) {
      get(dendrite, 0, 49);

      assertThat(get(dendrite, 10, 12)).extracting(ScoreRow::id).containsExactly(10, 11, 12);
      assertThat(queries).hasValue(1);
    }
  }

  @Test
  void betaZeroCachesPointsThatGetsAssembleWithOneMultiGet() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_THROUGH, 0.0)) {
      get(dendrite, 0, 4);
      get(dendrite, 3, 7);
      assertThat(dendrite.cachedEntries()).isEqualTo(8);

      assertThat(get(dendrite, 2, 6)).extracting(ScoreRow::id).containsExactly(2, 3, 4, 5, 6);
      put(dendrite, new ScoreRow(4, 44));
      assertThat(get(dendrite, 0, 4)).contains(new ScoreRow(4, 44));

      assertThat(queries).hasValue(3);
      assertThat(dendrite.metrics().entriesRefreshed()).isEqualTo(1);
    }
  }

  @Test
  void betaZeroWriteThroughInsertCreatesThePointOfACoveredInterval() throws SQLException {
    table.remove(5);
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_THROUGH, 0.0)) {
      assertThat(get(dendrite, 0, 9)).hasSize(9);

      ScoreRow inserted = new ScoreRow(5, 55);
      dendrite.write(5, 5, inserted, table::set, ScoreTable.putting(inserted));

      assertThat(get(dendrite, 0, 9)).hasSize(10).contains(inserted);
      assertThat(queries).hasValue(1);
    }
  }

  /**
   * Soak finding 8: a β = 0 filler whose Shared lease lapses while it stores its points must not mark the
   * interval covered afterwards, or a row a writer inserted meanwhile reads as absent. The codec holds the
   * filler between its lease check and its cover until the writer is through.
   */
  @Test
  void aFillerWhoseLeaseLapsedDoesNotCoverAnIntervalAWriterChanged() throws Exception {
    table.remove(0);
    StallingCodec stalling = new StallingCodec(row -> true);
    try (RangeCache<Integer, ScoreRow> dendrite =
        dendrite(
            stalling,
            builder ->
                builder
                    .writePolicy(WritePolicy.WRITE_AROUND)
                    .maxSharedFraction(0.0)
                    .intervalLeases(Duration.ofMillis(300), Duration.ofSeconds(10)))) {
      CompletableFuture<List<ScoreRow>> filler =
          CompletableFuture.supplyAsync(() -> get(dendrite, 0, 3));
      assertThat(stalling.encoding.await(30, TimeUnit.SECONDS))
          .as("the filler reached its points")
          .isTrue();

      ScoreRow inserted = new ScoreRow(0, 7);
      put(dendrite, inserted); // granted once the filler's Shared lease lapsed
      stalling.release.countDown();
      assertThat(filler.get(30, TimeUnit.SECONDS))
          .extracting(ScoreRow::id)
          .containsExactly(1, 2, 3);

      assertThat(get(dendrite, 0, 3)).contains(inserted);
    }
  }

  /**
   * Soak finding 9: a β = 0 filler that counted a point as cached (its entry registered) must not cover the
   * interval once a get has dropped that entry (its value was gone, as after an eviction, and the get could not
   * refill it), or the point's rows read as absent. The codec holds the filler at its second point while point 0
   * is evicted and dropped.
   */
  @Test
  void aFillerDoesNotCoverAPointWhoseEntryAGetDroppedMeanwhile() throws Exception {
    StallingCodec stalling = new StallingCodec(null);
    try (RangeCache<Integer, ScoreRow> dendrite =
        dendrite(
            stalling,
            builder -> builder.writePolicy(WritePolicy.WRITE_AROUND).maxSharedFraction(0.0))) {
      List<ScoreRow> rows = table.range(0, 1);
      get(dendrite, 0, 0); // point 0 cached and registered; [0, 1] is not covered
      stalling.holdOn(row -> row.id() == 1);
      CompletableFuture<List<ScoreRow>> filler =
          CompletableFuture.supplyAsync(() -> get(dendrite, 0, 1));
      assertThat(stalling.encoding.await(30, TimeUnit.SECONDS))
          .as("the filler reached point 1")
          .isTrue();

      cacheTier.client.delete(
          new CacheKeys<>("scores", "id", DomainType.INTEGER).entryKey(Interval.point(0)));
      assertThatThrownBy(
              () ->
                  dendrite.get(
                      0,
                      0,
                      (lb, ub) -> {
                        throw new SQLException("no refill");
                      }))
          .as("a get that drops point 0's entry and cannot refill it")
          .isInstanceOf(DataStoreException.class);
      stalling.release.countDown();
      assertThat(filler.get(30, TimeUnit.SECONDS)).isEqualTo(rows);

      assertThat(get(dendrite, 0, 1)).isEqualTo(rows);
    }
  }

  /**
   * Soak finding 9: a get answered from coverage sees the coverage and the point entries as one snapshot. A write
   * that uncovered the interval and dropped a point's entry between the two looks had the get serve the point's row
   * as absent, though the write only updated it.
   */
  @Test
  void aGetFromCoverageDoesNotLoseAPointAConcurrentWriteDrops() throws Exception {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_AROUND, 0.0)) {
      assertThat(get(dendrite, 0, 2))
          .extracting(ScoreRow::id)
          .containsExactly(0, 1, 2); // points 0-2, [0, 2] covered
      CountDownLatch looked = new CountDownLatch(1);
      CountDownLatch written = new CountDownLatch(1);
      AtomicBoolean first = new AtomicBoolean(true);
      dendrite.afterCoverageLookForTesting(
          () -> {
            if (first.compareAndSet(true, false)) {
              looked.countDown();
              try {
                written.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          });
      CompletableFuture<List<ScoreRow>> reader =
          CompletableFuture.supplyAsync(() -> get(dendrite, 0, 2));
      assertThat(looked.await(30, TimeUnit.SECONDS)).as("the get found [0, 2] covered").isTrue();

      put(dendrite, new ScoreRow(1, 99)); // uncovers [0, 2] and drops point 1's entry
      written.countDown();
      assertThat(reader.get(30, TimeUnit.SECONDS))
          .extracting(ScoreRow::id)
          .containsExactly(0, 1, 2);
    }
  }

  /** ScoreRow's codec, which holds the first encode of a row {@code holdOn} accepts until released. */
  private static final class StallingCodec implements RowCodec<Integer, ScoreRow> {
    final CountDownLatch encoding = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private final AtomicReference<Predicate<ScoreRow>> holdOn;

    StallingCodec(Predicate<ScoreRow> holdOn) {
      this.holdOn = new AtomicReference<>(holdOn);
    }

    void holdOn(Predicate<ScoreRow> rows) {
      holdOn.set(rows);
    }

    @Override
    public Integer attributeOf(ScoreRow row) {
      return ScoreRow.CODEC.attributeOf(row);
    }

    @Override
    public Object identityOf(ScoreRow row) {
      return ScoreRow.CODEC.identityOf(row);
    }

    @Override
    public byte[] encode(ScoreRow row) {
      Predicate<ScoreRow> rows = holdOn.get();
      if (rows != null && rows.test(row) && holdOn.compareAndSet(rows, null)) {
        encoding.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return ScoreRow.CODEC.encode(row);
    }

    @Override
    public ScoreRow decode(byte[] bytes) {
      return ScoreRow.CODEC.decode(bytes);
    }
  }

  /**
   * Two write-arounds touch one cached result; the first holds it quarantined (its old value still readable) while
   * the second finishes. A process that reads the cache without PrInT (another process's direct hit) must not find
   * the old value once the second returned: the second deletes the entry too, though the first unregistered it.
   */
  @Test
  void aWriteAroundDeletesAnEntryAnOverlappingWriteStillHoldsQuarantined() throws Exception {
    RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_AROUND, 1.0);
    get(dendrite, 7, 9);
    String key = new CacheKeys<>("scores", "id", DomainType.INTEGER).entryKey(Interval.of(7, 9));
    assertThat(cacheTier.client.get(key)).isPresent();

    CountDownLatch firstApplying = new CountDownLatch(1);
    CountDownLatch letFirstFinish = new CountDownLatch(1);
    ScoreRow nine = new ScoreRow(9, 99);
    Thread first =
        new Thread(
            () ->
                dendrite.write(
                    9,
                    9,
                    nine,
                    row -> {
                      firstApplying.countDown();
                      letFirstFinish.await();
                      table.set(row);
                    },
                    null));
    first.start();
    try {
      assertThat(firstApplying.await(10, TimeUnit.SECONDS)).isTrue();
      put(dendrite, new ScoreRow(7, 77));
      assertThat(cacheTier.client.get(key))
          .as("the old [7, 9] after the write of 7 returned, the write of 9 still running")
          .isEmpty();
    } finally {
      letFirstFinish.countDown();
      first.join();
    }
    assertThat(get(dendrite, 7, 9)).contains(new ScoreRow(7, 77), nine);
  }

  @Test
  void anIntermediateBetaDropsEntriesItWouldDuplicateTooMuch() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_AROUND, 0.5)) {
      get(dendrite, 0, 9);
      get(dendrite, 8, 17); // shares 2 of 10 rows with [0, 9]: 20% <= 50%, both stay
      assertThat(dendrite.cachedEntries()).isEqualTo(2);

      get(dendrite, 3, 12); // shares 7 of 10 with [0, 9] and 5 of 10 with [8, 17]: only [0, 9] goes
      assertThat(dendrite.cachedEntries()).isEqualTo(2);
      assertThat(get(dendrite, 8, 17)).hasSize(10);
      assertThat(queries).hasValue(3);
    }
  }

  @Test
  void aFailingQueryReleasesItsLeasesCachesNothingAndReachesTheCaller() {
    try (RangeCache<Integer, ScoreRow> dendrite =
        dendrite(
            builder ->
                builder.intervalLeases(
                    java.time.Duration.ofSeconds(30), java.time.Duration.ofSeconds(1)))) {
      SQLException failure = new SQLException("boom");
      assertThatThrownBy(
              () ->
                  dendrite.get(
                      0,
                      9,
                      (lb, ub) -> {
                        throw failure;
                      }))
          .isInstanceOf(DataStoreException.class)
          .hasCause(failure);
      assertThatThrownBy(
              () ->
                  dendrite.get(
                      0,
                      9,
                      (lb, ub) -> {
                        throw new IllegalStateException("unchecked");
                      }))
          .isInstanceOf(IllegalStateException.class);

      assertThat(dendrite.cachedEntries()).isZero();
      // Both leases were released: a write on the interval and a fill of it go through at once.
      put(dendrite, new ScoreRow(3, 33));
      assertThat(get(dendrite, 0, 9)).contains(new ScoreRow(3, 33));
      assertThat(dendrite.cachedEntries()).isEqualTo(1);
    }
  }

  @Test
  void aFailingDataStoreWriteLeavesTheCacheConsistent() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_THROUGH, 1.0)) {
      get(dendrite, 0, 9);
      ScoreRow row = new ScoreRow(3, 33);
      assertThatThrownBy(
              () ->
                  dendrite.write(
                      3,
                      3,
                      row,
                      change -> {
                        throw new SQLException("disk full");
                      },
                      ScoreTable.putting(row)))
          .isInstanceOf(DataStoreException.class);

      assertThat(get(dendrite, 0, 9)).contains(new ScoreRow(3, 0));
    }
  }

  /**
   * Write-back sends its commit with the buffered writes (one round trip for both): when the buffer then reports a
   * failure, the refreshed results may hold a write that was not acknowledged, so they are dropped; when it fails
   * before anything went out, the old values are kept.
   */
  @Test
  void aWriteBackWhoseBufferFailsLeavesNoRefreshedResultBehind() {
    RuntimeException refused = new IllegalStateException("the buffer's replicas refused it");
    boolean[] failLate = {true};
    WriteBuffer<Integer, ScoreRow> failing =
        new WriteBuffer<>() {
          @Override
          public void buffer(Interval<Integer> interval, ScoreRow change) {
            throw refused;
          }

          @Override
          public Started start(Interval<Integer> interval, ScoreRow change) {
            return new Started() {
              @Override
              public Stored store() {
                if (!failLate[0]) {
                  throw refused;
                }
                return () -> {
                  throw refused;
                };
              }

              @Override
              public void abandon() {}
            };
          }

          @Override
          public void applyOverlapping(Interval<Integer> interval) {}
        };
    try (RangeCache<Integer, ScoreRow> dendrite =
        dendrite(builder -> builder.writeBack(failing, List.of(ScoreTable.BUFFERED_SET)))) {
      get(dendrite, 0, 9);
      ScoreRow row = new ScoreRow(3, 33);
      assertThatThrownBy(() -> dendrite.write(3, 3, row, null, ScoreTable.putting(row)))
          .as("a write-back Dendrite writes only the commands it was built with")
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("writes the commands it was built with");
      WriteCommand<Integer, ScoreRow, ScoreRow> unregistered = new UnregisteredSet();
      assertThatThrownBy(() -> dendrite.write(3, 3, row, unregistered))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is not one this write-back Dendrite was built with");
      assertThat(dendrite.cachedEntries()).as("refused before anything changed").isOne();
      assertThatThrownBy(() -> dendrite.write(3, 3, row, ScoreTable.BUFFERED_SET))
          .isSameAs(refused);
      assertThat(dendrite.cachedEntries()).as("dropped: it was committed with the change").isZero();
      int before = queries.get();
      assertThat(get(dendrite, 0, 9)).contains(new ScoreRow(3, 0));
      assertThat(queries.get()).as("a miss").isEqualTo(before + 1);

      failLate[0] = false;
      assertThatThrownBy(() -> dendrite.write(3, 3, row, ScoreTable.BUFFERED_SET))
          .isSameAs(refused);
      assertThat(get(dendrite, 0, 9)).contains(new ScoreRow(3, 0));
      assertThat(queries.get()).as("a hit: released, old value kept").isEqualTo(before + 1);
    }
  }

  /** {@link ScoreTable#BUFFERED_SET}'s twin, of the same command type, but a kind no Dendrite is built with. */
  private static final class UnregisteredSet implements WriteCommand<Integer, ScoreRow, ScoreRow> {
    @Override
    public Class<ScoreRow> type() {
      return ScoreRow.class;
    }

    @Override
    public byte[] encode(ScoreRow row) {
      return ScoreTable.BUFFERED_SET.encode(row);
    }

    @Override
    public ScoreRow decode(byte[] bytes) {
      return ScoreTable.BUFFERED_SET.decode(bytes);
    }

    @Override
    public void apply(ScoreRow row) {}
  }

  @Test
  void badBoundsAreRefusedNamingTheArgument() {
    try (RangeCache<Integer, ScoreRow> dendrite = dendrite(WritePolicy.WRITE_AROUND, 1.0)) {
      assertThatThrownBy(() -> get(dendrite, 9, 3))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("lowerBound 9 is greater than upperBound 3");
      assertThatThrownBy(() -> get(dendrite, -1, 3))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("lowerBound")
          .hasMessageContaining("minimum");
      assertThatThrownBy(() -> get(dendrite, 3, 1_001))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("upperBound")
          .hasMessageContaining("maximum");
      assertThatThrownBy(() -> dendrite.get(null, 3, (lb, ub) -> List.of()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("lowerBound must not be null");
      @SuppressWarnings("rawtypes")
      RangeCache raw = dendrite;
      RangeQuery<Object, Object> none = (lb, ub) -> List.of();
      assertThatThrownBy(() -> raw.get(1, "7", none))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("upperBound must be a integer");
      assertThatThrownBy(
              () ->
                  dendrite.write(
                      5, 2, new ScoreRow(2, 2), table::set, ScoreTable.putting(new ScoreRow(2, 2))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("lowerBound 5 is greater than upperBound 2");
      assertThat(queries).hasValue(0);
    }
  }
}
