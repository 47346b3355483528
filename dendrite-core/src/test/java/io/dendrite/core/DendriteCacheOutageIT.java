package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A cache server cut off by the network keeps its data. While it is unreachable, gets fall back to the
 * data store and writes still succeed; when it is reachable again it must not serve what those writes
 * changed.
 */
@ExtendWith(RealServers.class)
class DendriteCacheOutageIT {
  private static final CacheKeys<Integer> KEYS =
      new CacheKeys<>("scores", "id", DomainType.INTEGER);

  @ParameterizedTest
  // Write-back needs a WriteBuffer; the writeback module tests it (RangeWriteBack*IT).
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_AROUND", "WRITE_THROUGH"})
  void aServerThatComesBackNeverServesWhatChangedMeanwhile(
      WritePolicy policy, MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier =
            EmbeddedIqServers.builder().count(2).behindProxies().start();
        ScoreTable table = new ScoreTable(database).create(100);
        RangeCache<Integer, ScoreRow> dendrite =
            Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
                .collection("scores")
                .domain("id")
                .cache(cacheTier.client)
                .writePolicy(policy)
                .buildRangeCache()) {
      int lowerBound = 0;
      while (cacheTier.serverOf(KEYS.entryKey(Interval.of(lowerBound, lowerBound + 4))) != 1) {
        lowerBound += 5;
      }
      int lb = lowerBound;
      AtomicInteger queries = new AtomicInteger();
      RangeQuery<Integer, ScoreRow> query =
          (from, to) -> {
            queries.incrementAndGet();
            return table.range(from, to);
          };
      dendrite.get(lb, lb + 4, query);

      cacheTier.proxies.get(1).cut();
      assertThat(dendrite.get(lb, lb + 4, query)).contains(new ScoreRow(lb, 0));
      ScoreRow changed = new ScoreRow(lb, 42);
      dendrite.write(lb, lb, changed, table::set, ScoreTable.putting(changed));
      assertThat(dendrite.get(lb, lb + 4, query)).contains(changed);
      assertThat(dendrite.metrics().cacheUnavailable()).isGreaterThan(0);

      cacheTier.proxies.get(1).restore();
      assertThat(dendrite.get(lb, lb + 4, query))
          .as("after the server came back")
          .contains(changed);
      int queriesBefore = queries.get();
      assertThat(dendrite.get(lb, lb + 4, query)).contains(changed);
      assertThat(queries.get())
          .as("the entry is cached again, with the new value")
          .isEqualTo(queriesBefore);
    }
  }
}
