package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.ChildJvm;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A write-through writer killed (SIGKILL) between its data-store write and its cache commit (issue 37). It held Q
 * leases on the cached results it was refreshing; they lapse on the servers, and the servers used to keep the old
 * values on a lapse: every later read — a successor owner that trusts the cache (a hand-over, {@code
 * dropCachedOnBuild(false)}), a process reading the cache directly ({@link CachedReads}) — served a row older than
 * the database, for good. Now a Q lease that lapses without its holder's commit takes its key's value with it (as a
 * Q-invalidate lease always did), so the next reader misses and reads the database.
 *
 * <p>Every way a write changes a cached result in the servers is covered: rewritten whole under a Q-refresh lease
 * ({@code qaread}, {@code swap}), appended to under a Q-incremental lease ({@code iqappend}, with {@link
 * ChangeRecords} and the near cache off), and deleted under a Q-invalidate lease to be kept in the near cache alone
 * ({@code qareg}, with change records and the near cache on; a Q-invalidate lease always took its value with it, so
 * the negative control below does not apply to it).
 */
@ExtendWith(RealServers.class)
class KilledWriterIT {

  /** The servers' lease lifetime: short, so the test outlives the leases the killed writer left. */
  private static final Duration LEASES = Duration.ofSeconds(2);

  private static final ScoreRow OLD = new ScoreRow(5, 0);
  private static final ScoreRow NEW = new ScoreRow(5, 999);

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"refresh", "append", "near-only"})
  void aWriterKilledAfterItsDatabaseWriteLeavesNoOldResultToRead(
      String refresh, MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cacheTier =
            EmbeddedIqServers.builder().count(2).leaseLifetime(LEASES).start();
        ScoreTable table = new ScoreTable(database).create(20)) {
      killWriterAfterItsDatabaseWrite(cacheTier, database, table, refresh);

      try (IqClient another = cacheTier.anotherClient()) {
        Optional<List<ScoreRow>> direct = builder(another, refresh).buildReads().get(0, 9);
        assertThat(direct)
            .as("a process reading the cache directly finds no result older than the database")
            .satisfiesAnyOf(
                read -> assertThat(read).isEmpty(), read -> assertThat(read.get()).contains(NEW));
      }
      try (RangeCache<Integer, ScoreRow> successor = successor(cacheTier.client, refresh)) {
        assertThat(successor.get(0, 9, table::range))
            .as("the successor, trusting what the cache holds, serves the database's row")
            .contains(NEW)
            .doesNotContain(OLD);
      }
    }
  }

  /**
   * The negative control: servers that keep the value when a Q lease lapses, as before the fix (and as
   * IQ-Twemcached does), serve the old row to both readers above — which the test would catch.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"refresh", "append"})
  void serversThatKeepTheValueOnALapseServeTheOldRow(String refresh, MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cacheTier =
            EmbeddedIqServers.builder()
                .count(2)
                .leaseLifetime(LEASES)
                .server(server -> server.lapseDropsValue(false))
                .start();
        ScoreTable table = new ScoreTable(database).create(20)) {
      killWriterAfterItsDatabaseWrite(cacheTier, database, table, refresh);

      try (IqClient another = cacheTier.anotherClient()) {
        assertThat(builder(another, refresh).buildReads().get(0, 9))
            .hasValueSatisfying(rows -> assertThat(rows).contains(OLD).doesNotContain(NEW));
      }
      try (RangeCache<Integer, ScoreRow> successor = successor(cacheTier.client, refresh)) {
        assertThat(successor.get(0, 9, table::range)).contains(OLD).doesNotContain(NEW);
      }
    }
  }

  /**
   * Runs {@link WriterChild}: it caches [0, 9], then writes row 5 through; its data-store write commits and it
   * stops there until it is killed. Returns once the killed writer's Q leases have lapsed on the servers (and its
   * claim on the range with them).
   */
  private static void killWriterAfterItsDatabaseWrite(
      EmbeddedIqServers cacheTier, MySqlTestDatabase database, ScoreTable table, String refresh)
      throws Exception {
    try (ChildJvm writer =
        ChildJvm.start(
            WriterChild.class.getName(),
            List.of("-Xmx96m"),
            List.of(cacheTier.addresses(), database.jdbcUrl(), database.name(), refresh))) {
      writer.awaitLine("applied"::equals, Duration.ofSeconds(90));
      assertThat(table.range(5, 5)).as("the database has the write").containsExactly(NEW);
      writer.kill();
    }
    // The leases were granted before the data-store write, so they lapse at most LEASES after
    // "applied".
    Thread.sleep(LEASES.plusSeconds(1).toMillis());
  }

  private static RangeCache<Integer, ScoreRow> successor(IqClient cache, String refresh) {
    return builder(cache, refresh)
        .coordinator(new LocalCoordinator(Duration.ofSeconds(2)))
        .dropCachedOnBuild(false) // as after a hand-over: the cache is trusted
        .buildRangeCache();
  }

  private static Dendrite.Builder<Integer, ScoreRow> builder(IqClient cache, String refresh) {
    Dendrite.Builder<Integer, ScoreRow> builder =
        Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
            .collection("scores")
            .domain("id")
            .cache(cache)
            .writePolicy(WritePolicy.WRITE_THROUGH);
    return switch (refresh) {
      case "append" -> builder.changeRecords(ScoreTable.SET_RECORDS).nearCache(false);
      case "near-only" -> builder.changeRecords(ScoreTable.SET_RECORDS);
      default -> builder;
    };
  }

  /**
   * Caches [0, 9] with a 2 s claim on the range, then writes row 5 = 999 through: prints {@code applied} once the
   * database has it and blocks there, before the cache commit, until killed. Arguments: the cache servers, the
   * database's JDBC URL and name, {@code refresh}, {@code append} or {@code near-only}.
   */
  public static final class WriterChild {
    public static void main(String[] args) throws Exception {
      IqClient cache = IqClient.builder().servers(args[0].split(",")).build();
      ScoreTable table = new ScoreTable(new MySqlTestDatabase(args[1], args[2]));
      RangeCache<Integer, ScoreRow> dendrite =
          builder(cache, args[3])
              .coordinator(new LocalCoordinator(Duration.ofSeconds(2)))
              .buildRangeCache();
      if (!dendrite.get(0, 9, table::range).contains(OLD)) {
        throw new IllegalStateException("row 5 should start at 0");
      }
      // On a busy machine the fill can outlast its 2 s I lease and cache nothing; the write must
      // find the result cached, or the negative control has nothing to show.
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (dendrite.cachedEntries() == 0 && System.nanoTime() - deadline < 0) {
        dendrite.get(0, 9, table::range);
      }
      if (dendrite.cachedEntries() == 0) {
        throw new IllegalStateException("[0, 9] could not be cached within 60 s");
      }
      dendrite.write(
          5,
          5,
          NEW,
          row -> {
            table.set(row);
            System.out.println("applied");
            Thread.sleep(Long.MAX_VALUE);
          },
          ScoreTable.putting(NEW));
    }
  }
}
