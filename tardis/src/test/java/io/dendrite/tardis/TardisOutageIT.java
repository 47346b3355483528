package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.store.mongodb.MongoStore;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.testsupport.faults.CuttableProxy;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The database goes away for 20 s under 8 threads that write ({@code $inc} and {@code $set}) and read through
 * TARDIS, through a TCP proxy in front of the real server. Every acknowledged write must be in the database once
 * recovery ends, none twice (each {@code $inc} counted by a model), and every read must see the reading thread's
 * acknowledged writes. Writes during the outage are acknowledged; the database alone fails every one of them (the
 * control, through the same proxy).
 */
@ExtendWith(RealServers.class)
class TardisOutageIT {
  private static final int DOCUMENTS = 160;
  private static final int THREADS = 8;
  private static final Duration STORE_TIMEOUT = Duration.ofSeconds(1);

  /**
   * FerretDB 1.x runs an update as a query and then a write of the documents it found, not atomically, so an update
   * that timed out here and is still running there can overwrite a newer one whatever its filter says (the fence of
   * {@code MongoStore} orders late updates only on MongoDB: finding 16). Loaded FerretDB answers in over a second
   * at times, so its store waits longer; the outage itself refuses connections, which fails at once.
   */
  private static final Duration FERRET_TIMEOUT = Duration.ofSeconds(5);

  /** The outage every technique goes through on MariaDB, as issue 16 asks (at least 20 s under 8 threads). */
  private static final Duration OUTAGE = Duration.ofSeconds(20);

  /**
   * The outage of the black-holed and FerretDB variants in {@code dev/test}, which add a kind of fault and a database
   * to the run above rather than length; {@code dev/soak -Dtardis.outage.seconds=20} runs them as long.
   */
  private static final Duration SHORT_OUTAGE =
      Duration.ofSeconds(Long.getLong("tardis.outage.seconds", 6));

  private enum Fault {
    REFUSE,
    BLACK_HOLE
  }

  /** The four techniques side by side through one outage, each on a table of its own. */
  @Test
  void everyTechniqueOnMariaDb(MySqlTestDatabase database) throws Exception {
    outage(
        mySql(database),
        Fault.REFUSE,
        OUTAGE,
        Technique.TAR,
        Technique.DIS,
        Technique.TARD,
        Technique.TARDIS);
  }

  @Test
  void tardisOnMariaDbBlackHoled(MySqlTestDatabase database) throws Exception {
    outage(mySql(database), Fault.BLACK_HOLE, SHORT_OUTAGE, Technique.TARDIS);
  }

  @Test
  void tardisOnFerretDb(MongoTestDatabase database) throws Exception {
    outage(mongo(database), Fault.REFUSE, SHORT_OUTAGE, Technique.TARDIS);
  }

  /**
   * How to reach one test database: its URL, a store opened on a URL (the real one or the proxy's), and how to
   * make a collection (a table) of documents.
   */
  private record Database(
      String url,
      Function<String, DataStore> storeAt,
      DataStore direct,
      Consumer<String> createCollection) {}

  /** One technique's part of a run: its collection, instance, documents and model. */
  private static final class Run {
    final Technique technique;
    final String collection;
    final List<EntityKey> documents = new ArrayList<>();
    final List<Expected> expected = new ArrayList<>();
    final LongAdder acknowledgedWhileDown = new LongAdder();
    final LongAdder unavailableReads = new LongAdder();
    final LongAdder notAcknowledged = new LongAdder();
    final ConcurrentLinkedQueue<String> staleReads = new ConcurrentLinkedQueue<>();
    Tardis tardis;

    Run(Technique technique) {
      this.technique = technique;
      this.collection = "users_" + technique.name().toLowerCase(java.util.Locale.ROOT);
      for (int id = 0; id < DOCUMENTS; id++) {
        documents.add(new EntityKey(collection, id));
        Expected one = new Expected();
        one.acknowledgedName = "u" + id;
        expected.add(one);
      }
    }
  }

  /**
   * What one document should hold: only its own thread writes it, so the acknowledged writes are in order; writes
   * whose outcome is unknown may or may not be in.
   */
  private static final class Expected {
    long acknowledgedIncrements;
    long unknownIncrements;
    String acknowledgedName;
    final List<String> namesMaybeAfter = new ArrayList<>();

    synchronized String mismatch(Optional<Map<String, Object>> fields) {
      if (fields.isEmpty()) {
        return "missing";
      }
      long score = ((Number) fields.get().get("score")).longValue();
      String name = (String) fields.get().get("name");
      if (score < acknowledgedIncrements || score > acknowledgedIncrements + unknownIncrements) {
        return "score "
            + score
            + ", expected "
            + acknowledgedIncrements
            + " acknowledged increments (+ up to "
            + unknownIncrements
            + " of unknown outcome)";
      }
      if (!name.equals(acknowledgedName) && !namesMaybeAfter.contains(name)) {
        return "name " + name + ", expected " + acknowledgedName + " or one of " + namesMaybeAfter;
      }
      return null;
    }
  }

  private void outage(Database database, Fault fault, Duration length, Technique... techniques)
      throws Exception {
    List<Run> runs = new ArrayList<>();
    for (Technique technique : techniques) {
      runs.add(new Run(technique));
    }
    AtomicBoolean stop = new AtomicBoolean();
    AtomicBoolean down = new AtomicBoolean();
    ExecutorService threads = Executors.newFixedThreadPool(THREADS * runs.size());
    List<Tardis> opened = new ArrayList<>();
    try (DataStore direct = database.direct();
        CuttableProxy proxy = CuttableProxy.inFrontOf(database.url());
        DataStore viaProxy = database.storeAt().apply(proxy.routed(database.url()));
        EmbeddedIqServers cache =
            EmbeddedIqServers.builder().count(2).pinnedMemoryBytes(64L << 20).start();
        AutoCloseable load = LoadShutdown.of(stop, threads, opened)) {
      List<Future<?>> running = new ArrayList<>();
      for (Run run : runs) {
        database.createCollection().accept(run.collection);
        direct.apply(
            run.documents.stream()
                .map(
                    key ->
                        new EntityChanges(
                            key,
                            ChangeSequence.of(insert(Map.of("name", "u" + key.id(), "score", 0)))))
                .toList());
        run.tardis =
            Tardis.builder()
                .cache(cache.client)
                .store(viaProxy)
                .technique(run.technique)
                .replicas(2)
                .partitions(16)
                .drainThreads(4)
                .checkInterval(Duration.ofMillis(200))
                .build();
        opened.add(run.tardis);
        run.documents.forEach(run.tardis::read); // cached: hits are served in every mode
        for (int thread = 0; thread < THREADS; thread++) {
          int own = thread;
          running.add(threads.submit(() -> writeAndRead(run, own, stop, down)));
        }
      }

      Thread.sleep(3_000);
      if (fault == Fault.REFUSE) {
        proxy.cut();
      } else {
        proxy.blackHole();
      }
      down.set(true);
      for (Run run : runs) {
        awaitOrFail(
            () -> run.tardis.mode() == Mode.FAILED,
            run.technique + " in failed mode",
            Duration.ofSeconds(30));
      }
      assertThatThrownBy(
              () ->
                  viaProxy.apply(
                      List.of(
                          new EntityChanges(
                              runs.get(0).documents.get(0),
                              ChangeSequence.of(set("name", "alone"))))))
          .as("the database alone fails a write during the outage (the control)")
          .isInstanceOf(DataStoreUnavailableException.class);
      Thread.sleep(length.toMillis());
      for (Run run : runs) {
        TardisMetrics duringOutage = run.tardis.metrics();
        assertThat(run.acknowledgedWhileDown.sum())
            .as("%s's writes acknowledged while down", run.technique)
            .isPositive();
        assertThat(duringOutage.failedWritesAbsorbed()).isPositive();
        assertThat(duringOutage.bufferedDocuments()).isPositive();
      }

      proxy.restore();
      down.set(false);
      Thread.sleep(5_000);
      stop.set(true);
      for (Future<?> thread : running) {
        thread.get(60, TimeUnit.SECONDS);
      }
      for (Run run : runs) {
        awaitOrFail(
            () -> run.tardis.mode() == Mode.NORMAL && run.tardis.metrics().bufferedDocuments() == 0,
            run.technique + "'s recovery to end",
            Duration.ofSeconds(120));
        List<String> mismatches = new ArrayList<>();
        for (int id = 0; id < DOCUMENTS; id++) {
          String mismatch =
              run.expected.get(id).mismatch(direct.read(run.documents.get(id)).map(Entity::fields));
          if (mismatch != null) {
            mismatches.add(id + ": " + mismatch);
          }
        }
        TardisMetrics after = run.tardis.metrics();
        System.out.printf(
            "TardisOutageIT %s: absorbed %d, acknowledged while down %d, recovered %d (foreground %d),"
                + " unavailable reads %d, not acknowledged %d (outcome unknown %d)%n",
            run.technique,
            after.failedWritesAbsorbed(),
            run.acknowledgedWhileDown.sum(),
            after.recovered(),
            after.recoveredByForeground(),
            run.unavailableReads.sum(),
            run.notAcknowledged.sum(),
            after.outcomeUnknown());
        assertThat(mismatches)
            .as("%s: documents that differ from the acknowledged writes", run.technique)
            .isEmpty();
        assertThat(run.staleReads)
            .as("%s: reads that missed the thread's acknowledged writes", run.technique)
            .isEmpty();
      }
    }
  }

  /**
   * One thread: {@code $inc} and {@code $set} of documents only it writes (those whose id is {@code own} modulo
   * the thread count), and reads of them, each checked against its acknowledged writes.
   */
  private static Void writeAndRead(Run run, int own, AtomicBoolean stop, AtomicBoolean down) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int i = 0; !stop.get(); i++) {
      int id = own + THREADS * random.nextInt(DOCUMENTS / THREADS);
      EntityKey key = run.documents.get(id);
      Expected one = run.expected.get(id);
      int kind = random.nextInt(10);
      boolean wasDown = down.get();
      try {
        if (kind < 4) {
          run.tardis.write(key, ChangeSequence.of(inc("score", 1)));
          synchronized (one) {
            one.acknowledgedIncrements++;
          }
        } else if (kind < 7) {
          String name = "t" + own + "-" + i;
          run.tardis.write(key, ChangeSequence.of(set("name", name)));
          synchronized (one) {
            one.acknowledgedName = name;
            one.namesMaybeAfter.clear();
          }
        } else {
          Optional<Entity> read = run.tardis.read(key);
          String mismatch = one.mismatch(read.map(Entity::fields));
          if (mismatch != null) {
            run.staleReads.add(key + ": " + mismatch + " (mode " + run.tardis.mode() + ")");
          }
          continue;
        }
        if (wasDown && down.get()) {
          run.acknowledgedWhileDown.increment();
        }
      } catch (TardisUnavailableException unavailable) {
        run.unavailableReads.increment();
      } catch (RuntimeException failed) {
        // Not acknowledged: may or may not be applied.
        run.notAcknowledged.increment();
        synchronized (one) {
          if (kind < 4) {
            one.unknownIncrements++;
          } else {
            one.namesMaybeAfter.add("t" + own + "-" + i);
          }
        }
      }
    }
    return null;
  }

  private static void awaitOrFail(BooleanSupplier condition, String what, Duration limit)
      throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for %s", what).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  private static Database mySql(MySqlTestDatabase database) {
    String url = database.jdbcUrl();
    return new Database(
        url,
        routed -> MySqlStore.open(routed, 3 * THREADS, STORE_TIMEOUT),
        MySqlStore.open(url, 2, Duration.ofSeconds(10)),
        table -> {
          try (Connection connection = database.connect();
              Statement statement = connection.createStatement()) {
            statement.execute(
                "CREATE TABLE " + table + " (id INT PRIMARY KEY, name VARCHAR(64), score INT)");
          } catch (SQLException e) {
            throw new IllegalStateException("could not create " + table, e);
          }
        });
  }

  private static Database mongo(MongoTestDatabase database) {
    String url = database.connectionString();
    return new Database(
        url,
        routed -> MongoStore.open(routed, database.name(), FERRET_TIMEOUT),
        MongoStore.open(url, database.name(), Duration.ofSeconds(10)),
        collection -> {});
  }
}
