package io.dendrite.writeback.document;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.DomainType;
import io.dendrite.iq.client.Backoff;
import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.DamagedValue;
import io.dendrite.writeback.ForwardingStore;
import io.dendrite.writeback.WriteBackMeters;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.engine.UndecodableValueException;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.store.DataStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealServers.class)
class RangeWriteBackIT {

  @Test
  void aMissAppliesTheOverlappingBufferedUpdatesInsertsAndDeletesBeforeItQueries(
      MySqlTestDatabase database) throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        RangeStack stack =
            new RangeStack(cache.client, store, engine -> engine.replicas(2).drainThreads(0))) {
      seed(store, 0, 9);
      stack.update(new RangeRow(3, 33));
      stack.insert(new RangeRow(12, 120));
      stack.delete(5);
      stack.update(new RangeRow(3, 34));
      assertThat(stack.buffer.bufferedEntries()).isEqualTo(4);
      assertThat(RangeRow.readRange(store, 0, 20))
          .as("nothing drained yet")
          .contains(new RangeRow(3, 0), new RangeRow(5, 0))
          .doesNotContain(new RangeRow(12, 120));

      assertThat(stack.get(0, 9))
          .containsExactly(
              row(0), row(1), row(2), new RangeRow(3, 34), row(4), row(6), row(7), row(8), row(9));
      assertThat(stack.buffer.bufferedEntries())
          .as("the insert at 12 does not overlap [0, 9]")
          .isEqualTo(1);
      assertThat(RangeRow.readRange(store, 10, 20)).as("still buffered").isEmpty();

      assertThat(stack.get(10, 20)).containsExactly(new RangeRow(12, 120));
      assertThat(stack.buffer.bufferedEntries()).isZero();
      assertThat(stack.writeBack.metrics().pendingWrites()).isZero();

      stack.update(new RangeRow(12, 121));
      assertThat(stack.get(10, 20))
          .as("a hit, refreshed by the write")
          .containsExactly(new RangeRow(12, 121));
      assertThat(stack.dendrite.metrics().hits()).isPositive();
      assertThat(RangeRow.readRange(store, 12, 12))
          .as("buffered behind the hit")
          .containsExactly(new RangeRow(12, 120));
    }
  }

  @Test
  void randomWritesDrainToTheModelAndDrainedEntriesLeaveTheIndex(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        RangeStack stack =
            new RangeStack(
                cache.client,
                store,
                engine -> engine.replicas(2).drainThreads(0),
                range -> range.reapInterval(Duration.ofMillis(20)),
                settings -> settings)) {
      TreeMap<Long, Long> model = new TreeMap<>();
      Random random = new Random(7);
      for (int i = 0; i < 300; i++) {
        long id = random.nextInt(60);
        long val = 1000 + i;
        if (!model.containsKey(id)) {
          stack.insert(new RangeRow(id, val));
          model.put(id, val);
        } else if (random.nextInt(4) == 0) {
          stack.delete(id);
          model.remove(id);
        } else {
          stack.update(new RangeRow(id, val));
          model.put(id, val);
        }
        if (i % 25 == 0) {
          long lowerBound = random.nextInt(60);
          long upperBound = lowerBound + random.nextInt(10);
          assertThat(stack.get(lowerBound, upperBound))
              .isEqualTo(rows(model.subMap(lowerBound, true, upperBound, true)));
        }
      }
      assertThat(stack.buffer.bufferedEntries()).isPositive();

      stack.writeBack.drainNow();

      assertThat(RangeRow.readRange(store, 0, RangeStack.MAX_ID)).isEqualTo(rows(model));
      awaitNoEntries(stack.buffer);
    }
  }

  @Test
  void aNewProcessRebuildsTheBufferedWritesIntervalsFromTheLog(MySqlTestDatabase database)
      throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database)) {
      seed(store, 0, 9);
      // Each process goes away without draining (drainOnClose zero), as a crashed one would: the
      // next takes over.
      try (RangeStack first =
          new RangeStack(
              cache.client,
              store,
              engine -> engine.replicas(2).drainThreads(0).drainOnClose(Duration.ZERO))) {
        first.update(new RangeRow(3, 33));
        first.insert(new RangeRow(12, 120));
        first.delete(5);
        assertThat(first.get(3, 3)).containsExactly(new RangeRow(3, 33));
        assertThat(first.buffer.bufferedEntries()).isEqualTo(2);
      }
      try (IqClient client = cache.anotherClient();
          RangeStack second =
              new RangeStack(
                  client,
                  store,
                  engine -> engine.replicas(2).drainThreads(0).drainOnClose(Duration.ZERO))) {
        assertThat(second.buffer.bufferedEntries())
            .as("the insert at 12 and the delete at 5")
            .isEqualTo(2);
        assertThat(logLines(client, 2))
            .as("compacted on rebuild: two entries and the LSN mark, on 2 replicas")
            .hasSize(6);

        assertThat(second.get(0, 20))
            .extracting(RangeRow::id)
            .containsExactly(0L, 1L, 2L, 3L, 4L, 6L, 7L, 8L, 9L, 12L);
        assertThat(second.buffer.bufferedEntries()).isZero();
        second.buffer.compact();
        assertThat(logLines(client, 2)).as("only the LSN mark is left").hasSize(2);
        second.update(new RangeRow(7, 77));
      }
      try (IqClient client = cache.anotherClient();
          RangeStack third =
              new RangeStack(client, store, engine -> engine.replicas(2).drainThreads(0))) {
        assertThat(third.buffer.bufferedEntries()).isEqualTo(1);
        assertThat(logLines(client, 2))
            .as("LSNs keep growing across processes (the first one's were 1 to 3)")
            .anyMatch(line -> line.startsWith("i:") && Long.parseLong(line.split(":")[1]) > 3);
        assertThat(third.get(7, 7)).containsExactly(new RangeRow(7, 77));
      }
    }
  }

  /**
   * A log line that parses as a record but names bounds of another type, an inverted interval or a key that is no
   * buffered write's (another client's append, or damage) once made every later RangeWriteBack over the log fail to
   * build: no process could own the range again, nor drain what it had buffered.
   */
  @Test
  void aLogRecordNoEngineWroteDoesNotStopTheNextOwnerFromStarting(MySqlTestDatabase database)
      throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database)) {
      seed(store, 0, 4);
      try (RangeStack first =
          new RangeStack(cache.client, store, engine -> engine.drainThreads(0))) {
        first.update(new RangeRow(2, 22));
      }
      assertThat(
              cache.client.appendAll(
                  "bl:t:pos:0",
                  List.of(
                      "i:1000:abc:def:BW:t:l1\n".getBytes(StandardCharsets.UTF_8),
                      "i:1002:9:1:BW:t:l1\n".getBytes(StandardCharsets.UTF_8),
                      "i:1004:1:2:garbage\n".getBytes(StandardCharsets.UTF_8)),
                  true))
          .isEqualTo(io.dendrite.iq.client.Outcome.OK);
      try (RangeStack next =
          new RangeStack(cache.client, store, engine -> engine.drainThreads(0))) {
        assertThat(next.get(0, 4)).contains(new RangeRow(2, 22)).hasSize(5);
      }
    }
  }

  @Test
  void anUndecodableBufferedWriteFailsTheMissesOverItUntilADrainMovesItAside(
      MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        RangeStack stack =
            new RangeStack(cache.client, store, engine -> engine.replicas(2).drainThreads(0))) {
      seed(store, 0, 4);
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      WriteBackMeters.of(stack.writeBack).bindTo(registry);
      stack.update(new RangeRow(1, 11));
      stack.update(new RangeRow(2, 22));
      String damagedKey = BufferedWriteKey.of(RangeRow.key(2));
      DamagedValue damagedValue = DamagedValue.plant(cache.client, 2, damagedKey);

      assertThatThrownBy(() -> stack.get(0, 4))
          .as("a miss cannot apply it, so it must not serve the range without it")
          .isInstanceOf(UndecodableValueException.class)
          .hasMessageContaining(damagedKey);
      stack.update(new RangeRow(3, 33));
      stack.insert(new RangeRow(7, 70));

      stack.writeBack.drainNow();

      assertThat(RangeRow.readRange(store, 0, 9))
          .containsExactly(
              row(0),
              new RangeRow(1, 11),
              row(2),
              new RangeRow(3, 33),
              row(4),
              new RangeRow(7, 70));
      damagedValue.assertMovedAsideOnce(stack.writeBack.metrics(), registry);
      assertThat(stack.get(0, 4))
          .as("served again once the damaged value is aside")
          .containsExactly(row(0), new RangeRow(1, 11), row(2), new RangeRow(3, 33), row(4));
      stack.update(new RangeRow(2, 23));
      stack.writeBack.drainNow();
      assertThat(RangeRow.readRange(store, 2, 2)).containsExactly(new RangeRow(2, 23));
    }
  }

  @Test
  void aWriteThatIsNotOneOfTheDendritesCommandsIsRefusedWithNothingChanged(
      MySqlTestDatabase database) throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        RangeStack stack = new RangeStack(cache.client, store, engine -> engine.drainThreads(0))) {
      seed(store, 0, 4);
      assertThat(stack.get(0, 4)).hasSize(5);
      RangeRow changed = new RangeRow(2, 22);

      // Changes of any other type could only come through a write that names no command kind, or
      // one the Dendrite was not built with; the signatures keep the rest out at compile time.
      assertThatThrownBy(() -> stack.dendrite.write(2L, 2L, "val = 22", null, changed.putting()))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("writes the commands it was built with");
      DocumentCommand<Long, RangeRow> notBuiltWith =
          DocumentCommand.updating(RangeRow::cacheUpdateOf);
      assertThatThrownBy(() -> stack.dendrite.write(2L, 2L, changed.update(), notBuiltWith))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is not one this write-back Dendrite was built with");
      assertThatThrownBy(() -> DocumentChanges.of(List.of()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("empty");
      EntityChanges otherTable =
          new EntityChanges(
              new io.dendrite.writeback.change.EntityKey("users", 2L),
              ChangeSequence.of(io.dendrite.writeback.change.Change.set("val", 22)));
      assertThatThrownBy(() -> stack.dendrite.write(2L, 2L, otherTable, RangeStack.WRITES))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("collection t");

      assertThat(stack.buffer.bufferedEntries()).isZero();
      assertThat(stack.writeBack.metrics().pendingWrites()).isZero();
      assertThat(stack.get(0, 4)).as("the cached entry is unchanged").contains(row(2));
      assertThat(stack.dendrite.metrics().writes()).isZero();

      stack.dendrite.write(
          2L,
          2L,
          DocumentChanges.of(List.of(changed.update(), new RangeRow(3, 33).update())),
          RangeStack.WRITES);
      assertThat(stack.buffer.bufferedEntries())
          .as("several documents' changes are one write")
          .isEqualTo(1);
      assertThat(stack.get(1, 3)).containsExactly(row(1), changed, new RangeRow(3, 33));
    }
  }

  @Test
  void overThePinnedBudgetWritesFallBackToWriteThroughAndRangesStayRight(MySqlTestDatabase database)
      throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        RangeStack stack =
            new RangeStack(
                cache.client, store, engine -> engine.drainThreads(0).pinnedBudgetBytes(300))) {
      TreeMap<Long, Long> model = new TreeMap<>();
      for (int round = 0; round < 6; round++) {
        for (long id = 0; id < 10; id++) {
          RangeRow row = new RangeRow(id, round * 100 + id);
          if (round == 0) {
            stack.insert(row);
          } else {
            stack.update(row);
          }
          model.put(id, row.val());
        }
        assertThat(stack.get(round, round + 4))
            .isEqualTo(rows(model.subMap((long) round, true, round + 4L, true)));
      }
      assertThat(stack.writeBack.metrics().writeThroughFallbacks()).isPositive();
      assertThat(stack.get(0, 9)).isEqualTo(rows(model));
      stack.writeBack.drainNow();
      assertThat(RangeRow.readRange(store, 0, 9)).isEqualTo(rows(model));
    }
  }

  @Test
  void whenPinnedMemoryRefusesTheLogWritesGoThroughAtOnce(MySqlTestDatabase database)
      throws SQLException {
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(1).pinnedMemoryBytes(64 * 1024).start();
        MySqlStore store = open(database);
        RangeStack stack = new RangeStack(cache.client, store, engine -> engine.drainThreads(0))) {
      seed(store, 0, 4);
      assertThat(stack.get(0, 4)).hasSize(5);
      int filler = 0;
      for (int size = 1024; size >= 1; size /= 4) {
        while (cache.client.setPinned("filler:" + filler, new byte[size]) == Outcome.OK) {
          filler++;
        }
      }

      stack.update(new RangeRow(1, 11));
      stack.insert(new RangeRow(7, 70));
      stack.delete(2);

      assertThat(logLines(cache.client, 1))
          .as("no interval could be logged")
          .noneMatch(line -> line.startsWith("i:"));
      assertThat(stack.buffer.bufferedEntries()).isZero();
      assertThat(stack.writeBack.metrics().pendingWrites()).isZero();
      assertThat(RangeRow.readRange(store, 0, 9))
          .as("in the store before the writes returned")
          .containsExactly(row(0), new RangeRow(1, 11), row(3), row(4), new RangeRow(7, 70));
      assertThat(stack.get(0, 9)).isEqualTo(RangeRow.readRange(store, 0, 9));
    }
  }

  /**
   * A second range write-back of a range one already buffers (another instance of the service, or a second one built
   * by mistake) is refused before it reads anything: it would rebuild and compact the log the owner appends to, and
   * its Dendrite would not see the owner's buffered writes. The Dendrite over the first holds the first's claim.
   */
  @Test
  void aSecondRangeWriteBackOfTheRangeIsRefusedBeforeItReadsAnything(MySqlTestDatabase database)
      throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        IqClient otherClient = cache.anotherClient();
        MySqlStore store = open(database);
        RangeStack first =
            new RangeStack(cache.client, store, engine -> engine.replicas(2).drainThreads(0));
        DocumentWriteBack otherEngine =
            DocumentWriteBack.builder()
                .replicas(2)
                .drainThreads(0)
                .cache(otherClient)
                .store(store)
                .build()) {
      seed(store, 0, 9);
      first.update(new RangeRow(3, 33));
      assertThatThrownBy(
              () ->
                  RangeWriteBack.builder(DomainType.LONG)
                      .writeBack(otherEngine)
                      .collection(RangeRow.TABLE)
                      .domain(RangeRow.RANGE_ATTRIBUTE)
                      .build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("range " + RangeRow.TABLE + "/" + RangeRow.RANGE_ATTRIBUTE)
          .hasMessageContaining("already owned by");
      assertThatThrownBy(
              () ->
                  io.dendrite.core.Dendrite.builder(DomainType.LONG, RangeRow.CODEC)
                      .collection(RangeRow.TABLE)
                      .domain("another_attribute")
                      .cache(cache.client)
                      .writeBack(first.buffer, List.of(RangeStack.WRITES))
                      .build())
          .as("a Dendrite of another range over the buffer")
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("a Dendrite must be of its buffer's range");
      assertThat(first.get(0, 9)).contains(new RangeRow(3, 33));
    }
    // Closed (the Dendrite and the range write-back both close the one claim): the range is free
    // again.
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10))) {
      new RangeStack(cache.client, store, engine -> engine.replicas(1)).close();
      try (RangeStack next = new RangeStack(cache.client, store, engine -> engine.replicas(1))) {
        assertThat(next.get(0, 9)).isEqualTo(RangeRow.readRange(store, 0, 9));
      }
    }
  }

  /**
   * Issue 13's bound: with in-process locks, a write-back update awaits two round trips however many cached results
   * it refreshes (the results' Q leases with their change records, the log record and the reads of the buffered
   * writes; then the buffered writes, their listings and the commit). The replica-lease engine, which locks each
   * document on its replicas before reading it, takes more, so the count can tell them apart.
   */
  /**
   * The one-trip update drops a result whose append another writer's lease refused instead of waiting: right only
   * when that writer is this Dendrite's own. Behind a coordinator that does not exclude other owners, no update takes
   * that path.
   */
  @Test
  void withoutASoleOwnerNoUpdateTakesTheOneTripPath(MySqlTestDatabase database)
      throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        RangeStack stack =
            new RangeStack(
                cache.client,
                store,
                engine -> engine.drainThreads(0).replicas(2).singleProcess(true),
                range -> range.withoutRangeClaimForTesting(),
                settings ->
                    settings
                        .changeRecords(RangeRow.CHANGE_RECORDS)
                        .coordinator((collection, domain) -> () -> {}))) {
      seed(store, 0, 19);
      stack.get(0, 9);
      stack.get(5, 14);
      stack.update(new RangeRow(7, 70));
      assertThat(awaitedBy(cache.client, () -> stack.update(new RangeRow(7, 71))))
          .as("a buffered write this process knows, two change records, but no sole owner")
          .isGreaterThan(1);
      assertThat(stack.get(0, 14)).contains(new RangeRow(7, 71));
    }
  }

  @Test
  void aWriteBackUpdateAwaitsTwoRoundTripsWhateverItRefreshes(MySqlTestDatabase database)
      throws SQLException {
    // Two cache tiers: an engine that locks in its process must be the only one on its tier.
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        EmbeddedIqServers leasedCache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database);
        RangeStack stack = soleOwnerWithChangeRecords(cache.client, store);
        RangeStack leased =
            new RangeStack(
                leasedCache.client,
                store,
                engine -> engine.drainThreads(0).replicas(2),
                range -> range.domain("pos2"),
                settings -> settings.domain("pos2"))) {
      seed(store, 0, 19);
      stack.get(0, 9);
      stack.get(5, 14);
      assertThat(stack.dendrite.cachedEntries()).isEqualTo(2);

      long requests = cache.client.threadCounters().requests();
      long writes = cache.client.threadCounters().writes();
      assertThat(awaitedBy(cache.client, () -> stack.update(new RangeRow(7, 70))))
          .as("a new buffered write")
          .isLessThanOrEqualTo(2);
      assertThat(cache.client.threadCounters().requests() - requests)
          .as("two results refreshed, and the buffer")
          .isGreaterThanOrEqualTo(5);
      assertThat(cache.client.threadCounters().writes() - writes)
          .as("each step's requests in one write per server")
          .isLessThanOrEqualTo(4);
      assertThat(awaitedBy(cache.client, () -> stack.update(new RangeRow(7, 71))))
          .as("a buffered write this process knows, two change records: all in one flight")
          .isEqualTo(1);
      assertThat(awaitedBy(cache.client, () -> stack.update(new RangeRow(12, 120))))
          .as("one result refreshed")
          .isLessThanOrEqualTo(2);
      // Every 16th record an entry is rewritten whole (qaread, then swap): the swap goes out with
      // the commit.
      int inOne = 0;
      for (long version = 72; version < 92; version++) {
        RangeRow next = new RangeRow(7, version);
        long awaited = awaitedBy(cache.client, () -> stack.update(next));
        assertThat(awaited).as("update to %s", next).isLessThanOrEqualTo(2);
        inOne += awaited == 1 ? 1 : 0;
      }
      assertThat(inOne).as("all but the rewrites in one round trip").isGreaterThanOrEqualTo(17);
      assertThat(stack.get(0, 14)).contains(new RangeRow(7, 91), new RangeRow(12, 120));
      assertThat(stack.get(7, 7)).containsExactly(new RangeRow(7, 91));

      assertThat(awaitedBy(leasedCache.client, () -> leased.update(new RangeRow(3, 30))))
          .as("replica leases")
          .isGreaterThan(2);
      stack.writeBack.drainNow();
      leased.writeBack.drainNow();
      assertThat(RangeRow.readRange(store, 7, 7)).containsExactly(new RangeRow(7, 91));
      assertThat(RangeRow.readRange(store, 3, 3)).containsExactly(new RangeRow(3, 30));
    }
  }

  /**
   * A write-back update that meets another writer's Q lease on a cached result it rewrites whole (here: no change
   * records) gives back what it holds, its documents' in-process locks included, before it waits: a drain of its
   * document goes through meanwhile (with the locks kept, the drain and the update would wait for each other until
   * the update's lease wait gave up). Then the update completes on the slow path and reaches the store.
   */
  @Test
  void anUpdateWaitingForAnotherWritersLeaseHoldsNoDocumentLock(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cache =
            EmbeddedIqServers.builder()
                .count(1)
                .client(
                    client ->
                        client.backoff(
                            new Backoff(
                                Duration.ofMillis(1),
                                Duration.ofMillis(50),
                                Duration.ofSeconds(60),
                                0.5)))
                .start();
        MySqlStore store = open(database);
        RangeStack stack =
            new RangeStack(
                cache.client, store, engine -> engine.drainThreads(0).singleProcess(true))) {
      seed(store, 0, 9);
      stack.get(0, 9);
      stack.update(new RangeRow(3, 30));
      String entry = "dd:t:pos:" + DomainType.LONG.format(0L) + ":" + DomainType.LONG.format(9L);
      try (Transaction other = cache.client.beginTransaction()) {
        assertThat(other.readForUpdate(entry)).isInstanceOf(RefreshResult.Granted.class);
        CompletableFuture<Void> update =
            CompletableFuture.runAsync(() -> stack.update(new RangeRow(3, 31)));
        Thread.sleep(
            300); // time to meet the lease; if it has not yet, the drain below just runs first
        assertThat(update).as("waits for the other writer's lease").isNotDone();

        stack.writeBack.drainNow();
        assertThat(RangeRow.readRange(store, 3, 3))
            .as("drained while the update waited")
            .containsExactly(new RangeRow(3, 30));

        other.release();
        update.get(60, TimeUnit.SECONDS);
      }
      assertThat(stack.get(0, 9)).contains(new RangeRow(3, 31));
      stack.writeBack.drainNow();
      assertThat(RangeRow.readRange(store, 3, 3)).containsExactly(new RangeRow(3, 31));
    }
  }

  /**
   * A single-process engine is the only writer of its buffered writes, so it remembers what it confirmed on every
   * replica: an update of a document it buffered, or drained, before reads nothing back from the cache servers. A
   * new engine (a restarted process) knows nothing and reads again, and every replica holds the whole value.
   */
  @Test
  void anUpdateOfADocumentThisProcessBufferedOrDrainedReadsNothingBack(MySqlTestDatabase database)
      throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database)) {
      seed(store, 0, 9);
      // No background reads meanwhile: the reaper's and the replica check's would count.
      try (RangeStack stack =
          new RangeStack(
              cache.client,
              store,
              engine ->
                  engine
                      .drainThreads(0)
                      .replicas(2)
                      .singleProcess(true)
                      .replicaCheckInterval(Duration.ofHours(1)),
              range -> range.reapInterval(Duration.ofHours(1)),
              settings -> settings)) {
        assertThat(getsBy(cache.client, () -> stack.update(new RangeRow(3, 30))))
            .as("unknown: read first")
            .isPositive();
        assertThat(getsBy(cache.client, () -> stack.update(new RangeRow(3, 31))))
            .as("buffered by this process")
            .isZero();
        stack.writeBack.drainNow();
        assertThat(RangeRow.readRange(store, 3, 3)).containsExactly(new RangeRow(3, 31));
        assertThat(getsBy(cache.client, () -> stack.update(new RangeRow(3, 32))))
            .as("drained by this process")
            .isZero();
        assertThat(getsBy(cache.client, () -> stack.update(new RangeRow(4, 40))))
            .as("another document: unknown")
            .isPositive();
      }
      // A restarted process: what the servers hold is read back and kept.
      try (RangeStack restarted =
          new RangeStack(
              cache.client,
              store,
              engine -> engine.drainThreads(0).replicas(2).singleProcess(true))) {
        assertThat(getsBy(cache.client, () -> restarted.update(new RangeRow(3, 33)))).isPositive();
        String bufferedKey = BufferedWriteKey.of(RangeRow.key(3));
        Map<?, CacheValue> copies =
            cache
                .client
                .replicaPlacement()
                .store(2)
                .getAllOnEach(List.of(bufferedKey))
                .get(bufferedKey);
        assertThat(copies).hasSize(2);
        assertThat(
                copies.values().stream()
                    .map(copy -> new String(copy.data(), StandardCharsets.UTF_8))
                    .distinct())
            .as("both replicas hold the same whole value")
            .hasSize(1);
        restarted.writeBack.drainNow();
        assertThat(RangeRow.readRange(store, 3, 4))
            .containsExactly(new RangeRow(3, 33), new RangeRow(4, 40));
      }
    }
  }

  /**
   * A buffered write no log record names (its process died between sending it and its log record's reply, which go
   * out together; here written through the engine's per-document API, which logs no interval) is found listed when
   * range write-back is built, and applied before the first miss, whatever its interval: no range result is filled
   * without it.
   */
  @Test
  void aListedBufferedWriteNoLogRecordNamesIsAppliedBeforeTheFirstMiss(MySqlTestDatabase database)
      throws SQLException {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database)) {
      seed(store, 0, 9);
      try (RangeStack first =
          new RangeStack(
              cache.client,
              store,
              engine ->
                  engine
                      .replicas(2)
                      .drainThreads(0)
                      .singleProcess(true)
                      .drainOnClose(Duration.ZERO))) {
        RangeRow unlogged = new RangeRow(3, 33);
        first.writeBack.write(unlogged.update().key(), unlogged.update().changes());
        assertThat(first.buffer.bufferedEntries()).as("no log record").isZero();
      }
      try (IqClient client = cache.anotherClient();
          RangeStack second =
              new RangeStack(
                  client,
                  store,
                  engine -> engine.replicas(2).drainThreads(0).singleProcess(true))) {
        assertThat(second.get(2, 4)).containsExactly(row(2), new RangeRow(3, 33), row(4));
        assertThat(RangeRow.readRange(store, 3, 3))
            .as("applied by the miss")
            .containsExactly(new RangeRow(3, 33));
        assertThat(second.get(7, 8))
            .as("applied once: later misses have nothing more to apply")
            .containsExactly(row(7), row(8));
      }
    }
  }

  /**
   * A miss that must first apply buffered writes to a store that is down fails with the type
   * {@code Dendrite.get} documents, core's {@link io.dendrite.core.DataStoreException} (the unavailable kind of it),
   * not a write-back type a caller of the core API would not catch; nothing is lost, and the next get applies them.
   */
  @Test
  void aMissThatCannotApplyItsBufferedWritesFailsWithCoresDataStoreException(
      MySqlTestDatabase database) throws SQLException {
    AtomicBoolean down = new AtomicBoolean();
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore mysql = open(database);
        DataStore store =
            new ForwardingStore(mysql) {
              @Override
              public void apply(List<EntityChanges> batch) {
                if (down.get()) {
                  throw new DataStoreUnavailableException("the test took the store down", null);
                }
                super.apply(batch);
              }
            };
        RangeStack stack =
            new RangeStack(
                cache.client,
                store,
                engine ->
                    engine
                        .drainThreads(0)
                        .singleProcess(true)
                        .storeRetryDeadline(Duration.ofMillis(200)))) {
      seed(mysql, 0, 9);
      stack.update(new RangeRow(3, 30));
      down.set(true);
      assertThatThrownBy(() -> stack.get(0, 9))
          .isInstanceOf(io.dendrite.core.DataStoreException.class)
          .isInstanceOf(DataStoreUnavailableException.class);
      down.set(false);
      assertThat(stack.get(0, 9)).contains(new RangeRow(3, 30));
      assertThat(RangeRow.readRange(mysql, 3, 3)).containsExactly(new RangeRow(3, 30));
    }
  }

  /** How many {@code gets} requests (the reads of buffered writes) the cache servers served while {@code write} ran. */
  private static long getsBy(IqClient client, Runnable write) {
    long before = gets(client);
    write.run();
    return gets(client) - before;
  }

  private static long gets(IqClient client) {
    return client.config().servers().stream()
        .mapToLong(
            server -> Long.parseLong(client.servers().stats(server).getOrDefault("cmd_gets", "0")))
        .sum();
  }

  /**
   * An update whose change record another writer's Q lease refuses does not wait: its commit went out with the
   * append, so it drops that result (its delete voids the other writer's lease), and the other writer's value,
   * which lacks the update, is never served: neither its swap nor its commit brings it back. (Without a near cache:
   * with one, the update keeps the result in it alone and appends nothing.)
   */
  @Test
  void anUpdateWhoseChangeRecordIsRefusedDropsThatResult(MySqlTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MySqlStore store = open(database);
        RangeStack stack =
            new RangeStack(
                cache.client,
                store,
                engine -> engine.drainThreads(0).singleProcess(true),
                range -> range,
                settings -> settings.changeRecords(RangeRow.CHANGE_RECORDS).nearCache(false))) {
      seed(store, 0, 9);
      stack.get(0, 9);
      stack.update(new RangeRow(3, 30));
      assertThat(stack.dendrite.cachedEntries()).isEqualTo(1);
      String entry = "dd:t:pos:" + DomainType.LONG.format(0L) + ":" + DomainType.LONG.format(9L);
      try (Transaction other = cache.client.beginTransaction()) {
        RefreshResult granted = other.readForUpdate(entry);
        assertThat(granted).isInstanceOf(RefreshResult.Granted.class);
        byte[] before = ((RefreshResult.Granted) granted).lease().current().orElseThrow().data();

        assertThat(awaitedBy(cache.client, () -> stack.update(new RangeRow(3, 31))))
            .as("no wait for the lease")
            .isLessThanOrEqualTo(2);
        assertThat(stack.dendrite.cachedEntries()).as("the refused result is dropped").isZero();

        assertThat(((RefreshResult.Granted) granted).lease().swap(before))
            .as("the other writer's lease is void")
            .isNotEqualTo(Outcome.OK);
        other.commit();
      }
      assertThat(cache.client.get(entry)).as("nothing stale left behind").isEmpty();
      assertThat(stack.get(0, 9)).contains(new RangeRow(3, 31));
      stack.writeBack.drainNow();
      assertThat(RangeRow.readRange(store, 3, 3)).containsExactly(new RangeRow(3, 31));
    }
  }

  /**
   * The range's sole owner keeps the results its near cache holds there alone once a write touched them: from then
   * on an update of a row in cached results sends exactly what an update of a row in none sends (the buffer's
   * requests), and gets of them are near hits with the buffered rows. A process taking the range over finds no
   * stale copy in the servers: its miss applies the buffered writes and queries.
   */
  @Test
  void anUpdateOfResultsKeptInTheNearCacheAloneSendsOnlyTheBuffersRequests(
      MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2);
        MySqlStore store = open(database)) {
      seed(store, 0, 29);
      Supplier<RangeStack> soleOwner = () -> soleOwnerWithChangeRecords(cache.client, store);
      try (RangeStack stack = soleOwner.get()) {
        stack.get(0, 9);
        stack.get(5, 14);
        stack.update(new RangeRow(7, 70)); // takes both results out of the servers
        stack.update(new RangeRow(25, 250)); // in no cached result
        assertThat(stack.dendrite.metrics().entriesMovedToNearCache()).isEqualTo(2);

        long inResults = requestsOf(cache.client, () -> stack.update(new RangeRow(7, 71)));
        long inNone = requestsOf(cache.client, () -> stack.update(new RangeRow(25, 251)));
        assertThat(inResults).as("the buffer's requests alone").isEqualTo(inNone);

        long trips = cache.client.threadCounters().roundTrips();
        assertThat(stack.get(0, 9)).contains(new RangeRow(7, 71));
        assertThat(stack.get(5, 14)).contains(new RangeRow(7, 71));
        assertThat(cache.client.threadCounters().roundTrips() - trips).as("near hits").isZero();
      }
      try (RangeStack next = soleOwner.get()) {
        assertThat(next.get(0, 9)).contains(new RangeRow(7, 71));
        assertThat(next.get(5, 14)).contains(new RangeRow(7, 71));
        assertThat(next.dendrite.metrics().misses()).as("no copy left in the servers").isEqualTo(2);
        next.writeBack.drainNow();
        assertThat(RangeRow.readRange(store, 7, 7)).containsExactly(new RangeRow(7, 71));
        assertThat(RangeRow.readRange(store, 25, 25)).containsExactly(new RangeRow(25, 251));
      }
    }
  }

  /** A stack whose engine locks in its process (no drain threads, two replicas), with change records. */
  private static RangeStack soleOwnerWithChangeRecords(IqClient cache, DataStore store) {
    return new RangeStack(
        cache,
        store,
        engine -> engine.drainThreads(0).replicas(2).singleProcess(true),
        range -> range,
        settings -> settings.changeRecords(RangeRow.CHANGE_RECORDS));
  }

  private static long requestsOf(IqClient client, Runnable write) {
    long before = client.threadCounters().requests();
    write.run();
    return client.threadCounters().requests() - before;
  }

  private static long awaitedBy(IqClient client, Runnable write) {
    long before = client.threadCounters().roundTrips();
    write.run();
    return client.threadCounters().roundTrips() - before;
  }

  private static RangeRow row(long id) {
    return new RangeRow(id, 0);
  }

  private static List<RangeRow> rows(Map<Long, Long> model) {
    return model.entrySet().stream()
        .map(entry -> new RangeRow(entry.getKey(), entry.getValue()))
        .toList();
  }

  static void awaitNoEntries(RangeWriteBack<Long> buffer) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (buffer.bufferedEntries() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(buffer.bufferedEntries()).as("entries of drained writes left the index").isZero();
  }

  /** Every line of every replica of the range's log partitions. */
  private static List<String> logLines(IqClient client, int replicas) {
    return java.util.stream.IntStream.range(0, 16)
        .mapToObj(n -> client.replicaPlacement().store(replicas).getEach("bl:t:pos:" + n))
        .flatMap(List::stream)
        .map(CacheValue::data)
        .flatMap(data -> new String(data, StandardCharsets.UTF_8).lines())
        .toList();
  }

  static void createTable(MySqlTestDatabase database) throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE t (id BIGINT PRIMARY KEY, pos BIGINT NOT NULL, val BIGINT NOT NULL, KEY (pos))");
    }
  }

  /** Rows {@code from..to} with val 0, straight into the store. */
  static void seed(io.dendrite.writeback.store.DataStore store, long from, long to) {
    store.apply(
        java.util.stream.LongStream.rangeClosed(from, to)
            .mapToObj(id -> row(id).insert())
            .toList());
  }

  private static MySqlStore open(MySqlTestDatabase database) throws SQLException {
    createTable(database);
    return MySqlStore.open(database.jdbcUrl(), 4, Duration.ofSeconds(10));
  }
}
