package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.WritePolicy;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.document.DocumentCommand;
import io.dendrite.writeback.engine.BufferRefusedException;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link TardisDendrite} one failure at a time, on a real MariaDB behind {@link FaultyStore}'s switch and real IQ
 * servers: cached ranges served and refreshed during an outage, a new owner finding the range writes the last one
 * buffered (through the index it rebuilds from the cache tier), bad writes refused, pinned memory running out.
 */
@ExtendWith(RealServers.class)
class TardisDendriteIT {
  private static final int ROWS = 40;
  private static final String TABLE = "ranged";

  private MySqlStore mysql;
  private FaultyStore faulty;
  private EmbeddedIqServers cache;
  private final List<TardisDendrite<Long, NamedRow>> opened = new ArrayList<>();

  @BeforeEach
  void seed(MySqlTestDatabase database) throws Exception {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE " + TABLE + " (id INT PRIMARY KEY, pos INT, name VARCHAR(64))");
    }
    mysql = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
    mysql.apply(
        IntStream.range(0, ROWS)
            .mapToObj(
                id ->
                    new EntityChanges(
                        key(id), ChangeSequence.of(insert(Map.of("pos", id, "name", "u" + id)))))
            .toList());
    faulty = new FaultyStore(mysql);
    cache = EmbeddedIqServers.builder().count(2).pinnedMemoryBytes(64L << 20).start();
  }

  @AfterEach
  void close() {
    opened.forEach(TardisDendrite::close);
    cache.close();
    mysql.close();
  }

  @Test
  void duringAnOutageCachedRangesAreServedAndRefreshedAndMissesRefused() throws Exception {
    TardisDendrite<Long, NamedRow> ranges =
        ranges(tardis -> tardis.drainThreads(1), range -> range);
    ranges.get(0L, 9L); // cached; [20, 29] is not
    faulty.down.set(true);

    ranges.write(4L, 5L, names(4, 5, "while down"));

    assertThat(ranges.mode()).isEqualTo(Mode.FAILED);
    assertThat(ranges.get(0L, 9L))
        .as("the cached range, refreshed by the buffered write")
        .contains(new NamedRow(4, "while down"), new NamedRow(5, "while down"));
    assertThatThrownBy(() -> ranges.get(20L, 29L))
        .isInstanceOf(TardisUnavailableException.class)
        .hasMessageContaining("failed mode");
    assertThat(ranges.metrics().failedWritesAbsorbed()).isEqualTo(1);

    faulty.down.set(false);
    awaitRecovered(ranges);
    assertThat(name(4)).isEqualTo("while down");
    assertThat(name(5)).isEqualTo("while down");
    assertThat(ranges.get(20L, 29L)).hasSize(10);
  }

  /**
   * TARDIS as a setting of an ordinary Dendrite, composed with either write policy: writes keep being acknowledged
   * while the database is down (write-through refreshes the cached range, write-around drops it), a miss over what
   * is buffered is refused, and once the database answers a miss applies the buffered write before it queries.
   */
  @ParameterizedTest
  @EnumSource(
      value = WritePolicy.class,
      names = {"WRITE_THROUGH", "WRITE_AROUND"})
  void aDendriteWithTardisAsItsOutageToleranceKeepsWritingThroughAnOutage(WritePolicy policy)
      throws Exception {
    try (Dendrite<Long, NamedRow> rows =
        Dendrite.builder(DomainType.LONG, NamedRow.CODEC)
            .collection(TABLE)
            .domain("pos")
            .range(0L, (long) ROWS - 1)
            .cache(cache.client)
            .writePolicy(policy)
            .outageTolerance(TardisRanges.of(tardisSettings().drainThreads(1)))
            .query(
                "byPos",
                (lo, hi) ->
                    faulty.readRange(TABLE, "pos", lo, hi).stream().map(NamedRow::of).toList())
            .command("rename", DocumentCommand.updating(NamedRow::updateOf))
            .build()) {
      assertThat(rows.get("byPos", 0L, 9L)).hasSize(10);
      faulty.down.set(true);

      rows.write("rename", 4L, 4L, names(4, 4, "while down"));

      assertThat(name(4)).as("teleported, not in MySQL").isEqualTo("u4");
      if (policy == WritePolicy.WRITE_THROUGH) {
        assertThat(rows.get("byPos", 0L, 9L))
            .as("the cached range, refreshed by the teleported write")
            .contains(new NamedRow(4, "while down"));
      } else {
        assertThatThrownBy(() -> rows.get("byPos", 0L, 9L))
            .as("write-around dropped the cached range; the miss is refused while MySQL is down")
            .isInstanceOf(TardisUnavailableException.class);
      }

      faulty.down.set(false);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      List<NamedRow> read = null;
      while (read == null) {
        assertThat(System.nanoTime()).as("waiting for MySQL to be seen up").isLessThan(deadline);
        try {
          read = rows.get("byPos", 0L, 9L);
        } catch (TardisUnavailableException notYet) {
          Thread.sleep(50);
        }
      }
      assertThat(read).contains(new NamedRow(4, "while down"));
      while (!name(4).equals("while down")) {
        // Write-around: the miss applied it before it queried. Write-through: a hit, and the
        // recovery worker applies it.
        assertThat(System.nanoTime()).as("waiting for recovery to apply it").isLessThan(deadline);
        Thread.sleep(20);
      }
    }
  }

  /**
   * TARDIS keeps its teleported writes in the Dendrite's cache tier: settings naming another cache client are refused
   * when the Dendrite is built, and the range is given up again (a Dendrite built next owns it).
   */
  @Test
  void tardisSettingsOverAnotherCacheClientAreRefused() throws Exception {
    try (var other = cache.anotherClient()) {
      Dendrite.Builder<Long, NamedRow> rows =
          Dendrite.builder(DomainType.LONG, NamedRow.CODEC)
              .collection(TABLE)
              .domain("pos")
              .range(0L, (long) ROWS - 1)
              .cache(cache.client)
              .writePolicy(WritePolicy.WRITE_THROUGH)
              .command("rename", DocumentCommand.updating(NamedRow::updateOf));
      assertThatThrownBy(
              () ->
                  rows.copy()
                      .outageTolerance(TardisRanges.of(tardisSettings().cache(other)))
                      .build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("give Tardis.Builder.cache the Dendrite's IqClient");
      try (Dendrite<Long, NamedRow> next =
          rows.outageTolerance(TardisRanges.of(tardisSettings())).build()) {
        assertThat(next.rangeName()).isEqualTo(TABLE + ".pos");
      }
    }
  }

  /**
   * An owner buffers a range write while the database is down and goes away before anything is applied; the next
   * owner, whose database answers, must not read past it: its first miss over the interval applies it first.
   */
  @Test
  void theNextOwnerAppliesTheBufferedRangeWriteBeforeItsFirstMiss() throws Exception {
    bufferedByAnOwnerThatWentAway();

    TardisDendrite<Long, NamedRow> next = ranges(tardis -> tardis, range -> range);

    assertThat(next.mode()).as("something is buffered").isEqualTo(Mode.RECOVERY);
    assertThat(next.get(10L, 19L))
        .contains(new NamedRow(12, "buffered"), new NamedRow(13, "buffered"));
    assertThat(name(12)).isEqualTo("buffered");
    assertThat(next.metrics().recoveredByForeground()).isEqualTo(1);
  }

  /** The control of the test above: a next owner whose misses ignore the index reads the database stale. */
  @Test
  void aNextOwnerIgnoringTheIndexReadsStale() throws Exception {
    bufferedByAnOwnerThatWentAway();

    TardisDendrite<Long, NamedRow> next =
        ranges(tardis -> tardis, TardisDendrite.Builder::ignoringTheIndex);

    assertThat(next.get(10L, 19L)).contains(new NamedRow(12, "u12"), new NamedRow(13, "u13"));
  }

  @Test
  void badWritesAreRefusedBeforeAnythingChanges() {
    TardisDendrite<Long, NamedRow> ranges = ranges(tardis -> tardis, range -> range);
    DocumentChanges elsewhere =
        DocumentChanges.of(
            List.of(
                new EntityChanges(new EntityKey("other", 1), ChangeSequence.of(set("name", "x")))));

    assertThatThrownBy(() -> ranges.write(1L, 1L, elsewhere))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("other");
    assertThatThrownBy(() -> ranges.write(5L, 4L, names(4, 5, "inverted")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ranges.write(0L, (long) ROWS * 1000, names(4, 5, "outside")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(name(4)).isEqualTo("u4");
    assertThat(ranges.metrics().failedWritesAbsorbed()).isZero();
  }

  /** A rename of the rows in [first, last], as a caller's command: what a named write carries. */
  record Rename(long first, long last, String name) {}

  @Test
  void namedReadsAndWritesGoThroughTheSameInterfaceAsEveryDendrite() throws Exception {
    Dendrite<Long, NamedRow> ranges =
        ranges(
            tardis -> tardis.drainThreads(1),
            range ->
                range
                    .query("byPos")
                    .command("rename", Rename.class, r -> names(r.first(), r.last(), r.name())));
    assertThat(ranges.get("byPos", 0L, 9L)).hasSize(10);
    faulty.down.set(true);

    ranges.write("rename", 4L, 5L, new Rename(4, 5, "named while down"));

    assertThat(ranges.get("byPos", 0L, 9L)).contains(new NamedRow(4, "named while down"));
    assertThatThrownBy(() -> ranges.get("byName", 0L, 9L))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no query named \"byName\" on ranged.pos; bound: [byPos]");
    assertThatThrownBy(() -> ranges.write("rename", 4L, 5L, "x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("write command \"rename\" takes a " + Rename.class.getName());
    faulty.down.set(false);
    awaitRecovered((TardisDendrite<Long, NamedRow>) ranges);
    assertThat(name(5)).isEqualTo("named while down");
  }

  @Test
  void aFullPinnedBudgetRefusesTheWriteWithThatReason() throws Exception {
    TardisDendrite<Long, NamedRow> ranges =
        // A worker: it clears the listing the refused write left, as recovery ends.
        ranges(tardis -> tardis.pinnedBudgetBytes(1).drainThreads(1), range -> range);
    faulty.down.set(true);

    assertThatThrownBy(() -> ranges.write(7L, 7L, names(7, 7, "refused")))
        .isInstanceOfSatisfying(
            BufferRefusedException.class,
            refusal ->
                assertThat(refusal.limit()).isEqualTo(BufferRefusedException.Limit.PINNED_BUDGET))
        .hasMessageContaining("not acknowledged");

    faulty.down.set(false);
    awaitRecovered(ranges);
    assertThat(name(7)).isEqualTo("u7");
    assertThat(ranges.get(0L, 9L)).contains(new NamedRow(7, "u7"));
  }

  /** Rows 12 and 13 named "buffered" by an owner that buffered the write and closed; the database is back. */
  private void bufferedByAnOwnerThatWentAway() {
    TardisDendrite<Long, NamedRow> first = ranges(tardis -> tardis, range -> range);
    faulty.down.set(true);
    first.write(12L, 13L, names(12, 13, "buffered"));
    first.close();
    opened.remove(first);
    faulty.down.set(false);
  }

  private TardisDendrite<Long, NamedRow> ranges(
      UnaryOperator<Tardis.Builder> settings,
      UnaryOperator<TardisDendrite.Builder<Long, NamedRow>> rangeSettings) {
    TardisDendrite<Long, NamedRow> ranges =
        rangeSettings
            .apply(
                TardisDendrite.builder(DomainType.LONG, NamedRow.CODEC)
                    .tardis(settings.apply(tardisSettings()))
                    .collection(TABLE)
                    .domain("pos")
                    .range(0L, (long) ROWS - 1)
                    .rowOf(NamedRow::of)
                    .cacheUpdates(NamedRow::updateOf))
            .build();
    opened.add(ranges);
    return ranges;
  }

  /** TARDIS over the faulty store, one replica, no recovery worker, checking the store every 100 ms. */
  private Tardis.Builder tardisSettings() {
    return Tardis.builder()
        .replicas(1)
        .cache(cache.client)
        .store(faulty)
        .technique(Technique.TARDIS)
        .partitions(4)
        .drainThreads(0)
        .checkInterval(Duration.ofMillis(100));
  }

  /** Sets the name of every row in [first, last]. */
  private static DocumentChanges names(long first, long last, String name) {
    return DocumentChanges.of(
        LongStream.rangeClosed(first, last)
            .mapToObj(id -> new EntityChanges(key(id), ChangeSequence.of(set("name", name))))
            .toList());
  }

  private static EntityKey key(long id) {
    return new EntityKey(TABLE, id);
  }

  private String name(long id) {
    return (String) mysql.read(key(id)).map(Entity::fields).orElseThrow().get("name");
  }

  private static void awaitRecovered(TardisDendrite<Long, NamedRow> ranges)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (ranges.mode() != Mode.NORMAL || ranges.metrics().bufferedDocuments() > 0) {
      assertThat(System.nanoTime()).as("waiting for recovery to end").isLessThan(deadline);
      try {
        ranges.get(30L, 30L); // a request moves the mode on when a check is due
      } catch (TardisUnavailableException notYet) {
        // still in failed mode
      }
      Thread.sleep(20);
    }
  }
}
