package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.WriteOptions;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The near cache (L1) of a range's owner: hits without a round trip, and never a copy the owner can no longer vouch
 * for. The stale-read checker runs over it in {@code DendriteConsistencyIT}.
 */
@ExtendWith(RealServers.class)
class NearCacheIT {

  private static Dendrite.Builder<Integer, ScoreRow> builder(IqClient cache) {
    return Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
        .collection("scores")
        .domain("id")
        .range(0, 99)
        .cache(cache)
        .writePolicy(WritePolicy.WRITE_THROUGH);
  }

  @Test
  void aHitOfACachedRangeOrOfAPartOfItCostsNoRoundTripAndAWriteIsSeenAtOnce(
      MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(20);
        RangeCache<Integer, ScoreRow> dendrite = builder(cacheTier.client).buildRangeCache()) {
      assertThat(dendrite.nearCacheEnabled()).isTrue();
      dendrite.get(0, 9, table::range);

      long trips = cacheTier.client.threadCounters().roundTrips();
      List<ScoreRow> whole = dendrite.get(0, 9, table::range);
      List<ScoreRow> part = dendrite.get(3, 5, table::range);
      assertThat(cacheTier.client.threadCounters().roundTrips() - trips).isZero();
      assertThat(whole).hasSize(10);
      assertThat(part).extracting(ScoreRow::id).containsExactly(3, 4, 5);
      assertThatThrownBy(() -> whole.add(new ScoreRow(50, 0)))
          .as("the near cache's rows are shared: the caller gets them read-only")
          .isInstanceOf(UnsupportedOperationException.class);
      assertThat(dendrite.metrics().nearHits()).isEqualTo(2);

      ScoreRow row = new ScoreRow(4, 44);
      dendrite.write(4, 4, row, table::set, ScoreTable.putting(row));
      assertThat(dendrite.get(3, 5, table::range)).contains(row);
      assertThat(dendrite.get(0, 9, table::range)).contains(row);
      assertThat(dendrite.metrics().nearEntries()).isEqualTo(1);
      assertThat(dendrite.metrics().nearBytes()).isPositive();
    }
  }

  /** The gets show under Micrometer's cache meter names, with the tier that answered them. */
  @Test
  void getsAreMeteredByResultAndTier(MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(20)) {
      try (RangeCache<Integer, ScoreRow> first = builder(cacheTier.client).buildRangeCache()) {
        first.get(0, 9, table::range);
      }
      // The next owner rebuilds the first one's entries from the log; its near cache starts empty.
      try (RangeCache<Integer, ScoreRow> dendrite = builder(cacheTier.client).buildRangeCache()) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DendriteMeters.of(dendrite, Tag.of("service", "test")).bindTo(registry);
        dendrite.get(0, 9, table::range); // a hit in the servers
        dendrite.get(0, 9, table::range); // near hit
        dendrite.get(2, 3, table::range); // near hit
        dendrite.get(10, 14, table::range); // miss
        ScoreRow row = new ScoreRow(4, 44);
        dendrite.write(4, 4, row, table::set, ScoreTable.putting(row));
        dendrite.get(0, 9, table::range); // near hit: the write kept the near copy current

        assertThat(gets(registry, "hit", "local")).isEqualTo(3);
        assertThat(gets(registry, "hit", "remote")).isEqualTo(1);
        assertThat(gets(registry, "miss", "remote")).isEqualTo(1);
        assertThat(
                registry
                    .get("cache.size")
                    .tags("cache", "scores.id", "tier", "local")
                    .gauge()
                    .value())
            .isEqualTo(2);
        assertThat(registry.get("dendrite.writes").tag("service", "test").functionCounter().count())
            .isEqualTo(1);
      }
    }
  }

  /**
   * A write keeps the near copies of the results it refreshed current, whichever way it refreshed them in the
   * servers (rewritten whole through its cache update, or by an appended change record), so the next get of them is
   * still a near hit, and it returns the written row. (Write-back's writes take the same path:
   * {@code RangeWriteBackConsistencyIT} checks them with the near cache on.)
   */
  @ParameterizedTest(name = "change records {0}")
  @CsvSource({"false", "true"})
  void aWriteKeepsTheNearCopiesItRefreshedCurrent(boolean changeRecords, MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(20)) {
      Dendrite.Builder<Integer, ScoreRow> builder = builder(cacheTier.client);
      if (changeRecords) {
        builder.changeRecords(ScoreTable.SET_RECORDS);
      }
      try (RangeCache<Integer, ScoreRow> dendrite = builder.buildRangeCache()) {
        dendrite.get(0, 9, table::range);
        dendrite.get(3, 5, table::range);

        ScoreRow row = new ScoreRow(4, 44);
        dendrite.write(4, 4, row, table::set, ScoreTable.putting(row));
        long trips = cacheTier.client.threadCounters().roundTrips();
        long nearHits = dendrite.metrics().nearHits();

        assertThat(dendrite.get(0, 9, table::range)).contains(row).hasSize(10);
        assertThat(dendrite.get(3, 5, table::range))
            .contains(row)
            .extracting(ScoreRow::id)
            .containsExactly(3, 4, 5);
        assertThat(cacheTier.client.threadCounters().roundTrips() - trips).isZero();
        assertThat(dendrite.metrics().nearHits() - nearHits).isEqualTo(2);

        // A delete too: the row leaves both copies.
        dendrite.write(4, 4, 4, table::remove, ScoreTable.removing(4));
        assertThat(dendrite.get(0, 9, table::range)).extracting(ScoreRow::id).doesNotContain(4);
        assertThat(dendrite.get(3, 5, table::range)).extracting(ScoreRow::id).containsExactly(3, 5);
      }
    }
  }

  /**
   * The sole owner's write of a result its near cache holds, with a change record, deletes the servers' copy and
   * keeps the result current in memory alone: the next writes of it send the cache servers nothing, gets of it are
   * near hits with the written rows, and the next owner, whose near cache starts empty, finds no stale copy in the
   * servers but fills from the database.
   */
  @Test
  void aWriteKeepsAResultItsNearCacheHoldsThereAloneAndTheNextOwnerFillsIt(
      MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(20)) {
      IqClient client = cacheTier.client;
      try (RangeCache<Integer, ScoreRow> dendrite =
          builder(client).changeRecords(ScoreTable.SET_RECORDS).buildRangeCache()) {
        dendrite.get(0, 9, table::range);
        dendrite.get(5, 14, table::range);

        long requests = client.threadCounters().requests();
        dendrite.write(5, 5, new ScoreRow(5, 50), table::set, null);
        assertThat(client.threadCounters().requests() - requests)
            .as("each result's delete under a Q lease, and the commit")
            .isPositive();
        assertThat(dendrite.metrics().entriesMovedToNearCache()).isEqualTo(2);

        requests = client.threadCounters().requests();
        ScoreRow five = new ScoreRow(5, 55);
        ScoreRow seven = new ScoreRow(7, 77);
        dendrite.write(5, 5, five, table::set, null);
        dendrite.write(7, 7, seven, table::set, null);
        assertThat(client.threadCounters().requests() - requests)
            .as("results kept in the near cache alone: nothing to refresh in the servers")
            .isZero();
        assertThat(dendrite.get(0, 9, table::range)).contains(five, seven).hasSize(10);
        assertThat(dendrite.get(5, 14, table::range)).contains(five, seven).hasSize(10);
        assertThat(client.threadCounters().requests() - requests).as("near hits").isZero();
        assertThat(dendrite.metrics().entriesMovedToNearCache()).isEqualTo(2);
      }
      try (RangeCache<Integer, ScoreRow> next =
          builder(client).changeRecords(ScoreTable.SET_RECORDS).buildRangeCache()) {
        long misses = next.metrics().misses();
        assertThat(next.get(0, 9, table::range)).contains(new ScoreRow(5, 55), new ScoreRow(7, 77));
        assertThat(next.get(5, 14, table::range))
            .contains(new ScoreRow(5, 55), new ScoreRow(7, 77));
        assertThat(next.metrics().misses() - misses)
            .as("the servers held no copy of either: both filled from the database")
            .isEqualTo(2);
      }
    }
  }

  /**
   * A write of a result the near cache does not hold yet (a new owner's, whose near cache starts empty) reads it from
   * the servers as it deletes it there, and keeps it, changed, in the near cache alone: the next get is a near hit.
   */
  @Test
  void aWriteAdoptsAResultItsNearCacheDidNotHold(MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(20)) {
      IqClient client = cacheTier.client;
      try (RangeCache<Integer, ScoreRow> first = builder(client).buildRangeCache()) {
        first.get(0, 9, table::range);
      }
      try (RangeCache<Integer, ScoreRow> next =
          builder(client).changeRecords(ScoreTable.SET_RECORDS).buildRangeCache()) {
        ScoreRow row = new ScoreRow(5, 50);
        next.write(5, 5, row, table::set, null);
        assertThat(next.metrics().entriesMovedToNearCache()).isOne();

        long trips = client.threadCounters().roundTrips();
        assertThat(next.get(0, 9, table::range)).contains(row).hasSize(10);
        assertThat(client.threadCounters().roundTrips() - trips).as("a near hit").isZero();
        assertThat(next.metrics().misses()).isZero();
      }
    }
  }

  /**
   * A coordinator of the user's whose claim says results may be kept in memory but lets other processes own the range
   * too (a contradiction: their writes would leave this process's copies stale) gets no near cache; one whose claim
   * says both gets one.
   */
  @Test
  void aClaimThatDoesNotExcludeOtherOwnersGetsNoNearCache() throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2)) {
      try (RangeCache<Integer, ScoreRow> shared =
          builder(cacheTier.client).coordinator(claiming(true, false)).buildRangeCache()) {
        assertThat(shared.nearCacheEnabled()).isFalse();
      }
      try (RangeCache<Integer, ScoreRow> sole =
          builder(cacheTier.client).coordinator(claiming(true, true)).buildRangeCache()) {
        assertThat(sole.nearCacheEnabled()).isTrue();
      }
    }
  }

  private static Coordinator claiming(boolean mayKeepResultsInMemory, boolean excludesOthers) {
    return (collection, domain) ->
        new Coordinator.RangeClaim() {
          @Override
          public boolean mayKeepResultsInMemory() {
            return mayKeepResultsInMemory;
          }

          @Override
          public boolean excludesOtherOwners() {
            return excludesOthers;
          }

          @Override
          public void close() {}
        };
  }

  private static double gets(SimpleMeterRegistry registry, String result, String tier) {
    return registry
        .get("cache.gets")
        .tags("cache", "scores.id", "result", result, "tier", tier)
        .functionCounter()
        .count();
  }

  /**
   * An owner that can no longer show it owns the range (its claim was taken by another while it was paused) must not
   * serve what it kept: the new owner may have written since. It drops its near cache and refuses the get, as it
   * refuses a miss; without the check it would have served row 5 as 0 after the new owner's write of 55.
   */
  @Test
  void anOwnerThatLostItsClaimServesNothingFromItsNearCache(MySqlTestDatabase database)
      throws Exception {
    Duration lifetime = Duration.ofSeconds(2);
    String record = LocalCoordinator.recordKey("scores", "id");
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        IqClient other = cacheTier.anotherClient();
        ScoreTable table = new ScoreTable(database).create(20);
        RangeCache<Integer, ScoreRow> owner =
            builder(cacheTier.client)
                .coordinator(new LocalCoordinator(lifetime))
                .buildRangeCache()) {
      owner.get(0, 9, table::range);
      owner.get(0, 9, table::range);
      assertThat(owner.metrics().nearHits()).isEqualTo(1);

      // While the owner is "paused", another process takes the range and writes row 5: the cached
      // result is gone from the cache servers (the new owner's write-around), the table has 55. The
      // new owner's record replaces the owner's on each server in one step: the owner is not really
      // paused, and its renewer puts a record it finds gone back (deleting it first, then taking
      // it,
      // left it that window, and a renewal in it failed a soak run).
      for (ServerAddress server : other.replicaPlacement().serversFor(record, 2)) {
        replace(other, server, record, "the new owner");
      }
      table.set(new ScoreRow(5, 55));
      other.delete(new CacheKeys<>("scores", "id", DomainType.INTEGER).entryKey(Interval.of(0, 9)));
      Thread.sleep(lifetime.toMillis()); // past what the owner's last renewal vouched for

      assertThatThrownBy(() -> owner.get(0, 9, table::range))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("ownership claim was lost");
      assertThat(owner.metrics().nearHits()).isEqualTo(1);
      assertThat(owner.metrics().nearEntries()).isZero();
    }
  }

  /**
   * Puts {@code holder}'s claim record in place of whatever holds {@code key} on {@code server}, atomically (a
   * compare-and-swap, retried if a renewal came first), pinned for longer than the test runs.
   */
  private static void replace(IqClient cache, ServerAddress server, String key, String holder) {
    byte[] value = holder.getBytes(StandardCharsets.UTF_8);
    WriteOptions options = WriteOptions.PINNED.withTtl(Duration.ofMinutes(5));
    for (int attempt = 0; attempt < 100; attempt++) {
      Optional<CacheValue> current = cache.servers().getOn(server, key);
      Outcome outcome =
          current.isPresent()
              ? cache.servers().casOn(server, key, value, current.get().cas(), options)
              : cache.servers().addOn(server, key, value, options);
      if (outcome == Outcome.OK) {
        return;
      }
    }
    throw new AssertionError("could not replace " + key + " on " + server + " in 100 attempts");
  }
}
