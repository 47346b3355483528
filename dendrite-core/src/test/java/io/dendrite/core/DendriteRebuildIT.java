package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.log.PredicateLog;
import io.dendrite.iq.client.CacheValue;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A Dendrite that takes a range over rebuilds PrInT from the log records its predecessor left in the
 * cache servers, so its writes still reach every cached result set.
 */
@ExtendWith(RealServers.class)
class DendriteRebuildIT {
  private static final CacheKeys<Integer> KEYS =
      new CacheKeys<>("scores", "id", DomainType.INTEGER);

  @ParameterizedTest(name = "{0}, beta {1}")
  @CsvSource({"WRITE_AROUND, 1.0", "WRITE_THROUGH, 1.0", "WRITE_AROUND, 0.0", "WRITE_THROUGH, 0.0"})
  void aSuccessorFindsEveryCachedEntry(WritePolicy policy, double beta, MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(3);
        ScoreTable table = new ScoreTable(database).create(100)) {
      int entriesBefore;
      try (RangeCache<Integer, ScoreRow> first = build(cacheTier, policy, beta)) {
        for (int lowerBound : List.of(0, 10, 20, 30, 5)) {
          first.get(lowerBound, lowerBound + 9, (lb, ub) -> table.range(lb, ub));
        }
        ScoreRow early = new ScoreRow(35, 3535); // leaves delete (or refresh) records behind
        first.write(35, 35, early, table::set, ScoreTable.putting(early));
        entriesBefore = first.cachedEntries();
      }

      try (RangeCache<Integer, ScoreRow> second = build(cacheTier, policy, beta)) {
        assertThat(second.cachedEntries()).isEqualTo(entriesBefore);
        assertThat(logRecords(cacheTier))
            .as("the log was compacted to the entries in force")
            .isEqualTo(entriesBefore + (beta == 0 ? coveredIntervals(policy) : 0));

        ScoreRow row = new ScoreRow(7, 777);
        second.write(7, 7, row, table::set, ScoreTable.putting(row));

        List<Interval<Integer>> holding7 =
            beta == 0 ? List.of(Interval.point(7)) : List.of(Interval.of(0, 9), Interval.of(5, 14));
        for (Interval<Integer> interval : holding7) {
          Optional<CacheValue> cached = cacheTier.client.get(KEYS.entryKey(interval));
          if (policy == WritePolicy.WRITE_AROUND) {
            assertThat(cached).as("write-around deleted %s", interval).isEmpty();
          } else {
            assertThat(cached).as("write-through refreshed %s", interval).isPresent();
            assertThat(new ResultSetCodec<>(ScoreRow.CODEC).decode(cached.get().data()).rows())
                .contains(row);
          }
        }
      }
    }
  }

  /**
   * A successor whose predecessor may have left a write half done drops every entry the log names: their values
   * leave the cache, the log keeps no entry, and the next get fills from the data store.
   */
  @ParameterizedTest(name = "beta {0}")
  @CsvSource({"1.0", "0.0"})
  void aSuccessorThatDistrustsItsPredecessorDropsEveryCachedEntry(
      double beta, MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(3);
        ScoreTable table = new ScoreTable(database).create(100)) {
      try (RangeCache<Integer, ScoreRow> first =
          build(cacheTier, WritePolicy.WRITE_THROUGH, beta)) {
        for (int lowerBound : List.of(0, 10, 20)) {
          first.get(lowerBound, lowerBound + 9, (lb, ub) -> table.range(lb, ub));
        }
        assertThat(first.cachedEntries()).isPositive();
      }
      Interval<Integer> cachedBefore = beta == 0 ? Interval.point(3) : Interval.of(0, 9);
      assertThat(cacheTier.client.get(KEYS.entryKey(cachedBefore))).isPresent();

      try (RangeCache<Integer, ScoreRow> second =
          Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
              .collection("scores")
              .domain("id")
              .cache(cacheTier.client)
              .writePolicy(WritePolicy.WRITE_THROUGH)
              .maxSharedFraction(beta)
              .dropCachedOnBuild(true)
              .buildRangeCache()) {
        assertThat(second.cachedEntries()).isZero();
        assertThat(cacheTier.client.get(KEYS.entryKey(cachedBefore))).isEmpty();
        second.get(0, 9, (lb, ub) -> table.range(lb, ub));
        assertThat(second.metrics().misses()).isEqualTo(1);
      }
      try (RangeCache<Integer, ScoreRow> third =
          build(cacheTier, WritePolicy.WRITE_THROUGH, beta)) {
        assertThat(third.cachedEntries())
            .as("the log holds only what the successor cached after dropping")
            .isEqualTo(beta == 0 ? 10 : 1);
      }
    }
  }

  /**
   * Two fills of one result, the first outlived by its I lease (a delete voided it): the second stores and registers
   * the result, then the first's store is refused. The first must not log the result as deleted after the second's
   * record, or a successor would not know the cached result: it would neither drop it nor keep it current, and a
   * process reading cached results directly (which trusts every value it finds) would serve it stale.
   */
  @Test
  void aFillThatLostItsLeaseLeavesTheWinnersEntryInTheLog(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(1);
        ScoreTable table = new ScoreTable(database).create(20)) {
      String key = KEYS.entryKey(Interval.of(0, 9));
      try (RangeCache<Integer, ScoreRow> first = build(cacheTier, WritePolicy.WRITE_THROUGH, 1.0)) {
        CountDownLatch querying = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger queries = new AtomicInteger();
        RangeQuery<Integer, ScoreRow> query =
            (lb, ub) -> {
              if (queries.incrementAndGet() == 1) {
                querying.countDown();
                release.await();
              }
              return table.range(lb, ub);
            };
        CompletableFuture<List<ScoreRow>> outlived =
            CompletableFuture.supplyAsync(() -> first.get(0, 9, query));
        assertThat(querying.await(30, TimeUnit.SECONDS)).isTrue();
        cacheTier.client.delete(key); // voids the first fill's I lease
        first.get(0, 9, query); // the second fill stores and registers the result
        release.countDown();
        outlived.get(30, TimeUnit.SECONDS); // its store is refused
        assertThat(first.cachedEntries()).isEqualTo(1);
      }

      try (RangeCache<Integer, ScoreRow> second =
          build(cacheTier, WritePolicy.WRITE_THROUGH, 1.0)) {
        assertThat(second.cachedEntries()).as("the successor knows the cached result").isEqualTo(1);
        ScoreRow row = new ScoreRow(5, 555);
        second.write(5, 5, row, table::set, ScoreTable.putting(row));
        Optional<CacheValue> cached = cacheTier.client.get(key);
        assertThat(cached).as("the successor's write refreshed the cached result").isPresent();
        assertThat(new ResultSetCodec<>(ScoreRow.CODEC).decode(cached.get().data()).rows())
            .contains(row);
      }
    }
  }

  /**
   * A value in the cache that the owner never registered (a store whose reply was lost, a predecessor's that its log
   * does not name) is kept current by nobody, while a process reading cached results directly trusts whatever it
   * finds: the owner's fill of that interval replaces it with the data store's rows.
   */
  @Test
  void anOwnersFillReplacesAValueNobodyRegistered(MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(1);
        ScoreTable table = new ScoreTable(database).create(20)) {
      String key = KEYS.entryKey(Interval.of(0, 9));
      List<ScoreRow> stale = List.of(new ScoreRow(3, -3));
      cacheTier.client.set(key, new ResultSetCodec<>(ScoreRow.CODEC).encode(stale));
      Dendrite.Builder<Integer, ScoreRow> settings =
          Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
              .collection("scores")
              .domain("id")
              .cache(cacheTier.client)
              .writePolicy(WritePolicy.WRITE_THROUGH);
      try (RangeCache<Integer, ScoreRow> owner = settings.buildRangeCache()) {
        List<ScoreRow> current = table.range(0, 9);
        assertThat(owner.get(0, 9, (lb, ub) -> table.range(lb, ub))).isEqualTo(current);
        assertThat(settings.buildReads().get(0, 9))
            .as("what a process reading directly finds")
            .contains(current);
      }
    }
  }

  /** β = 0 caches [0,9], [10,19], [20,29], [30,39] and [5,14] as covered point sets; write-around's update of 35 uncovers [30,39]. */
  private static int coveredIntervals(WritePolicy policy) {
    return policy == WritePolicy.WRITE_AROUND ? 4 : 5;
  }

  private static RangeCache<Integer, ScoreRow> build(
      EmbeddedIqServers cacheTier, WritePolicy policy, double beta) {
    return Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
        .collection("scores")
        .domain("id")
        .cache(cacheTier.client)
        .writePolicy(policy)
        .maxSharedFraction(beta)
        .logBatch(2)
        .buildRangeCache();
  }

  /** The records in the log of scores/id, over every partition. */
  static long logRecords(EmbeddedIqServers cacheTier) {
    List<String> partitions =
        IntStream.range(0, PredicateLog.PARTITIONS).mapToObj(KEYS::logKey).toList();
    return cacheTier.client.getAll(partitions).values().stream()
        .mapToLong(value -> new String(value.data(), StandardCharsets.UTF_8).lines().count())
        .sum();
  }
}
