package io.dendrite.writeback.document;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.iq.client.IqClient;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.WriteBack;
import io.dendrite.writeback.store.DataStore;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Write-back as a Dendrite user sets it up: {@code writeBack(WriteBack.to(store))} on the builder, commands bound by
 * name, nothing else to build or close. Against MariaDB and two IQ servers.
 */
@ExtendWith(RealServers.class)
class WriteBackDendriteIT {

  @Test
  void writesAreBufferedAppliedBeforeAMissAndDrainedWhenTheDendriteCloses(
      MySqlTestDatabase database) throws SQLException {
    RangeWriteBackIT.createTable(database);
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        MySqlStore store = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10))) {
      RangeWriteBackIT.seed(store, 0, 9);
      WriteBack writeBack = WriteBack.to(store).engine(engine -> engine.drainThreads(0));
      try (Dendrite<Long, RangeRow> rows = dendrite(cacheTier.client, store, writeBack)) {
        rows.write("save", 3L, 3L, new RangeRow(3, 33).update());
        assertThat(RangeRow.readRange(store, 3, 3))
            .as("buffered, not drained (no drain threads)")
            .containsExactly(new RangeRow(3, 0));
        assertThat(writeBack.metrics())
            .singleElement()
            .satisfies(m -> assertThat(m.pendingWrites()).isOne());

        assertThat(rows.get("range", 0L, 4L))
            .as("the miss applied the buffered write before it queried")
            .contains(new RangeRow(3, 33));
        assertThat(RangeRow.readRange(store, 3, 3)).containsExactly(new RangeRow(3, 33));

        rows.write("save", 7L, 7L, new RangeRow(7, 77).update());
        assertThat(RangeRow.readRange(store, 7, 7)).containsExactly(new RangeRow(7, 0));
      }
      assertThat(RangeRow.readRange(store, 7, 7))
          .as("closing the Dendrite closed the engine it opened, which drained the write")
          .containsExactly(new RangeRow(7, 77));
      assertThat(writeBack.metrics()).as("no engine left open").isEmpty();

      try (Dendrite<Long, RangeRow> again = dendrite(cacheTier.client, store, writeBack)) {
        assertThat(again.get("range", 7L, 7L))
            .as("the range was given up at close: a new Dendrite owns it")
            .containsExactly(new RangeRow(7, 77));
      }
    }
  }

  /** A write as the application has it: one row's new value. */
  public record NewValue(long id, long val) {}

  /**
   * A command whose argument is an application record: write-back buffers the document changes it makes of it, so a
   * call site passes the same record under write-through and write-back. A command whose changes are not document
   * changes is refused at build.
   */
  @Test
  void aRecordArgumentIsBufferedAsTheDocumentChangesItMakes(MySqlTestDatabase database)
      throws SQLException {
    RangeWriteBackIT.createTable(database);
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        MySqlStore store = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10))) {
      RangeWriteBackIT.seed(store, 0, 9);
      try (Dendrite<Long, RangeRow> rows =
          Dendrite.builder(DomainType.LONG, RangeRow.CODEC)
              .collection(RangeRow.TABLE)
              .domain(RangeRow.RANGE_ATTRIBUTE)
              .cache(cacheTier.client)
              .writeBack(WriteBack.to(store).engine(engine -> engine.drainThreads(0)))
              .query("range", (lb, ub) -> RangeRow.readRange(store, lb, ub))
              .command(
                  "set",
                  DocumentCommand.of(
                      NewValue.class,
                      value -> new RangeRow(value.id(), value.val()).update(),
                      value ->
                          RangeRow.cacheUpdateOf(new RangeRow(value.id(), value.val()).update())))
              .build()) {
        assertThat(rows.get("range", 0L, 9L)).contains(new RangeRow(6, 0));
        rows.write("set", 6L, 6L, new NewValue(6, 66));
        assertThat(RangeRow.readRange(store, 6, 6))
            .as("buffered")
            .containsExactly(new RangeRow(6, 0));
        assertThat(rows.get("range", 0L, 9L))
            .as("a hit, refreshed with the record's changes")
            .contains(new RangeRow(6, 66));
      }
      assertThat(RangeRow.readRange(store, 6, 6))
          .as("drained at close")
          .containsExactly(new RangeRow(6, 66));
    }
  }

  /** The ownership guard holds for write-back too: a second owner of the range is refused when it is built. */
  @Test
  void aSecondWriteBackDendriteOnTheRangeIsRefused(MySqlTestDatabase database) throws SQLException {
    RangeWriteBackIT.createTable(database);
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        MySqlStore store = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
        IqClient otherClient = cacheTier.anotherClient()) {
      WriteBack writeBack = WriteBack.to(store);
      try (Dendrite<Long, RangeRow> first = dendrite(cacheTier.client, store, writeBack)) {
        WriteBack second = WriteBack.to(store);
        assertThatThrownBy(() -> dendrite(otherClient, store, second))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("range t/pos is already owned by");
        assertThat(second.metrics())
            .as("the refused Dendrite closed the engine it opened")
            .isEmpty();
        first.write("save", 1L, 1L, new RangeRow(1, 11).insert());
        assertThat(first.get("range", 1L, 1L)).containsExactly(new RangeRow(1, 11));
      }
    }
  }

  private static Dendrite<Long, RangeRow> dendrite(
      IqClient cache, DataStore store, WriteBack writeBack) {
    return Dendrite.builder(DomainType.LONG, RangeRow.CODEC)
        .collection(RangeRow.TABLE)
        .domain(RangeRow.RANGE_ATTRIBUTE)
        .cache(cache)
        .writeBack(writeBack)
        .query("range", (lb, ub) -> RangeRow.readRange(store, lb, ub))
        .command("save", RangeStack.WRITES)
        .build();
  }
}
