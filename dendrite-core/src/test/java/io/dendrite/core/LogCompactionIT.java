package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.log.PredicateLog;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The range's log is pinned and every fill and drop appends to it. It used to be compacted only when an owner
 * rebuilt the index, so a long-running owner's log grew until pinned memory refused new records. Now it is rewritten
 * compacted while the range is served, and a successor still rebuilds exactly the entries in force.
 */
@ExtendWith(RealServers.class)
class LogCompactionIT {
  private static final int CYCLES = 700;

  @Test
  void aServedRangesLogStaysBoundedAndASuccessorRebuildsWhatIsInForce(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(100)) {
      try (RangeCache<Integer, ScoreRow> owner = build(cacheTier)) {
        fillAndDrop(owner, table);
        assertThat(DendriteRebuildIT.logRecords(cacheTier))
            .as("records after %d fills and drops", CYCLES)
            .isLessThan(PredicateLog.MIN_RECORDS_BEFORE_COMPACTION + 100L);
        owner.get(50, 59, table::range);
      }
      try (RangeCache<Integer, ScoreRow> successor = build(cacheTier)) {
        assertThat(successor.cachedEntries()).as("[0,9] and [50,59] are cached").isEqualTo(2);
        successor.get(50, 59, table::range);
        assertThat(successor.metrics().misses()).as("served from the cache").isZero();
        ScoreRow row = new ScoreRow(55, 5555);
        successor.write(55, 55, row, table::set, null);
        assertThat(successor.get(50, 59, table::range)).as("the write found it").contains(row);
      }
    }
  }

  /** The negative control: compacted only at rebuild, the same cycles leave every record behind. */
  @Test
  void compactedOnlyAtRebuildTheLogGrowsWithEveryFillAndDrop(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        ScoreTable table = new ScoreTable(database).create(100);
        RangeCache<Integer, ScoreRow> owner = build(cacheTier)) {
      owner.compactLogOnlyAtRebuildForTesting();
      fillAndDrop(owner, table);
      assertThat(DendriteRebuildIT.logRecords(cacheTier)).isGreaterThanOrEqualTo(2L * CYCLES);
    }
  }

  /** Caches [0,9], then fills [10,19] and drops it with a write-around, {@link #CYCLES} times. */
  private static void fillAndDrop(RangeCache<Integer, ScoreRow> owner, ScoreTable table)
      throws Exception {
    owner.get(0, 9, table::range);
    for (int cycle = 0; cycle < CYCLES; cycle++) {
      owner.get(10, 19, table::range);
      ScoreRow row = new ScoreRow(15, cycle);
      owner.write(15, 15, row, table::set, null);
    }
  }

  private static RangeCache<Integer, ScoreRow> build(EmbeddedIqServers cacheTier) {
    return Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
        .collection("scores")
        .domain("id")
        .cache(cacheTier.client)
        .logBatch(1)
        .buildRangeCache();
  }
}
