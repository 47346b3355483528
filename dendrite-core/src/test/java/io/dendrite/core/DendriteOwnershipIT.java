package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.ChildJvm;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One Dendrite owns a range in a cache tier at a time. Two Dendrites on one range used to both build: the first
 * cached [0, 9], the second wrote row 5 to the database and refreshed only what its own PrInT knew (nothing), and the
 * first kept serving the old row 5 for good. The same happened with two instances of one service. Now the second is
 * refused, in the same process and in another, and takes over once the first is gone.
 */
@ExtendWith(RealServers.class)
class DendriteOwnershipIT {

  private static Dendrite.Builder<Integer, ScoreRow> builder(IqClient cache) {
    return Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
        .collection("scores")
        .domain("id")
        .cache(cache)
        .writePolicy(WritePolicy.WRITE_THROUGH);
  }

  @Test
  void aSecondDendriteOnTheRangeInThisProcessIsRefusedUntilTheFirstCloses(
      MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(20)) {
      RangeCache<Integer, ScoreRow> first = builder(cacheTier.client).buildRangeCache();
      first.get(0, 9, table::range);

      assertThatThrownBy(() -> builder(cacheTier.client).buildRangeCache())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(
              "range scores/id is already owned by dendrite " + ProcessHandle.current().pid())
          .hasMessageContaining("ManyProcesses");
      assertThatThrownBy(() -> builder(cacheTier.anotherClient()).buildRangeCache())
          .as("another client of the same cache tier is refused as well")
          .isInstanceOf(IllegalStateException.class);

      first.close();
      try (RangeCache<Integer, ScoreRow> second = builder(cacheTier.client).buildRangeCache()) {
        ScoreRow row = new ScoreRow(5, 999);
        second.write(5, 5, row, table::set, ScoreTable.putting(row));
        assertThat(second.get(0, 9, table::range)).contains(row);
      }
    }
  }

  /**
   * A former owner killed (or fenced out) while it held the Q lease of a cached result leaves the lease behind until
   * the server lets it lapse. The range's sole owner used to fail every write touching that result with {@link
   * DendriteBusyException} until then; it now waits out its backoff, drops the result and writes. Behind a
   * coordinator that does not exclude other owners the holder may be a live writer of another process, so it still
   * refuses instead of dropping.
   */
  @Test
  void aLeaseLeftByAFormerOwnerDoesNotStopTheOwnersWrites(MySqlTestDatabase database)
      throws Exception {
    String key = new CacheKeys<>("scores", "id", DomainType.INTEGER).entryKey(Interval.of(0, 9));
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        IqClient former = cacheTier.anotherClient();
        ScoreTable table = new ScoreTable(database).create(20)) {
      try (RangeCache<Integer, ScoreRow> owner = builder(cacheTier.client).buildRangeCache();
          Transaction left = former.beginTransaction()) {
        owner.get(0, 9, table::range);
        assertThat(left.readForUpdate(key)).isInstanceOf(RefreshResult.Granted.class);
        ScoreRow row = new ScoreRow(5, 55);
        owner.write(5, 5, row, table::set, ScoreTable.putting(row));
        assertThat(owner.get(0, 9, table::range)).contains(row);
      }
      try (RangeCache<Integer, ScoreRow> notSole =
              builder(cacheTier.client)
                  .coordinator((collection, domain) -> () -> {})
                  .buildRangeCache();
          Transaction left = former.beginTransaction()) {
        notSole.get(0, 9, table::range);
        assertThat(left.readForUpdate(key)).isInstanceOf(RefreshResult.Granted.class);
        ScoreRow row = new ScoreRow(5, 56);
        assertThatThrownBy(() -> notSole.write(5, 5, row, table::set, ScoreTable.putting(row)))
            .isInstanceOf(DendriteBusyException.class)
            .hasMessageContaining("another process holds the Q lease of " + key);
      }
    }
  }

  /**
   * The negative control: without the guard, both build, and the first serves the row the second overwrote — the
   * check above would catch it.
   */
  @Test
  void withoutTheGuardTheFirstServesAStaleRow(MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(20);
        RangeCache<Integer, ScoreRow> first =
            builder(cacheTier.client).withoutOwnershipGuardForTesting().buildRangeCache();
        RangeCache<Integer, ScoreRow> second =
            builder(cacheTier.anotherClient())
                .withoutOwnershipGuardForTesting()
                .buildRangeCache()) {
      first.get(0, 9, table::range);
      ScoreRow row = new ScoreRow(5, 999);
      second.write(5, 5, row, table::set, ScoreTable.putting(row));
      assertThat(table.range(0, 9)).contains(row);
      assertThat(first.get(0, 9, table::range)).doesNotContain(row).contains(new ScoreRow(5, 0));
    }
  }

  /**
   * Another instance of the service: refused while the first runs (as soon as its record is seen renewed), and the
   * owner once the first was killed and its record lapsed.
   */
  @Test
  void anotherProcessIsRefusedWhileTheOwnerRunsAndTakesOverOnceItDied(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(20);
        ChildJvm owner =
            ChildJvm.start(
                OwnerChild.class.getName(), List.of("-Xmx96m"), List.of(cacheTier.addresses()))) {
      owner.awaitLine("owned"::equals, Duration.ofSeconds(60));

      assertThatThrownBy(
              () ->
                  builder(cacheTier.client)
                      .coordinator(new LocalCoordinator(Duration.ofSeconds(2)))
                      .build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("range scores/id is already owned by dendrite " + owner.pid());

      owner.kill();
      try (RangeCache<Integer, ScoreRow> successor =
          builder(cacheTier.client)
              .coordinator(new LocalCoordinator(Duration.ofSeconds(2)))
              .dropCachedOnBuild(true)
              .buildRangeCache()) {
        ScoreRow row = new ScoreRow(5, 999);
        successor.write(5, 5, row, table::set, ScoreTable.putting(row));
        assertThat(successor.get(0, 9, table::range)).contains(row);
      }
    }
  }

  /** Owns scores/id in the cache tier given as its argument, with a 2 s claim, until killed. */
  public static final class OwnerChild {
    public static void main(String[] args) throws Exception {
      IqClient cache = IqClient.builder().servers(args[0].split(",")).build();
      RangeCache<Integer, ScoreRow> dendrite =
          builder(cache).coordinator(new LocalCoordinator(Duration.ofSeconds(2))).buildRangeCache();
      System.out.println("owned");
      Thread.sleep(Long.MAX_VALUE);
      dendrite.close();
    }
  }
}
