package io.dendrite.tardis;

import static io.dendrite.tardis.UsersTable.awaitOrFail;
import static io.dendrite.tardis.UsersTable.awaitRecovered;
import static io.dendrite.tardis.UsersTable.key;
import static io.dendrite.tardis.UsersTable.name;
import static io.dendrite.tardis.UsersTable.score;
import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.StockMemcached;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.engine.BufferRefusedException;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * TARDIS with Recon on unmodified memcached ({@link Tardis.Builder#stockMemcached}), on memcached processes each test
 * starts with {@code -M} ({@link StockMemcached}) and a real MariaDB behind {@link FaultyStore}'s switches: an outage
 * under several threads, two instances with different views of the database (Recon, and its control), memory running
 * out, and a writer paused past its lock's lifetime (and its control).
 */
@ExtendWith(RealServers.class)
class ReconMemcachedIT {
  private static final int DOCUMENTS = 12;

  /** Every instance over one cache tier must list in the same partitions. */
  private static final int PARTITIONS = 4;

  /** Well above a busy machine's lock holding (a store round of a 10 s-timeout store is not expected here). */
  private static final Duration LOCK_TTL = Duration.ofSeconds(5);

  private MySqlStore mysql;
  private FaultyStore faulty;
  private StockMemcached memcached;
  private final List<Tardis> opened = new ArrayList<>();

  @BeforeEach
  void seed(MySqlTestDatabase database) throws Exception {
    mysql = UsersTable.seed(database, DOCUMENTS, ", bio MEDIUMTEXT");
    faulty = new FaultyStore(mysql);
  }

  @AfterEach
  void close() {
    opened.forEach(Tardis::close);
    if (memcached != null) {
      memcached.close();
    }
    mysql.close();
  }

  /**
   * (a) Four threads write ({@code $inc} and {@code $set}) and read their own documents on two memcached servers,
   * every buffered write on both, while the database is down for a few seconds in the middle: after recovery every
   * acknowledged write is in MariaDB exactly once, and no read missed one of its thread's acknowledged writes.
   */
  @Test
  void everyAcknowledgedWriteOfAnOutageIsInTheDatabaseExactlyOnce() throws Exception {
    memcached = StockMemcached.start(2, 64);
    Tardis tardis = build(memcached.client, faulty, builder -> builder.replicas(2).drainThreads(2));
    int threads = 4;
    long[] scores = new long[DOCUMENTS];
    String[] names = IntStream.range(0, DOCUMENTS).mapToObj(id -> "u" + id).toArray(String[]::new);
    List<String> failures = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger checkedReads = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> writers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread writer =
          new Thread(
              () -> {
                int written = 0;
                while (!stop.get()) {
                  // Each thread owns the documents id % threads == thread: their model is its own.
                  int id =
                      thread + threads * ThreadLocalRandom.current().nextInt(DOCUMENTS / threads);
                  int dice = ThreadLocalRandom.current().nextInt(10);
                  try {
                    if (dice < 5) {
                      tardis.write(key(id), ChangeSequence.of(inc("score", 1)));
                      scores[id]++;
                    } else if (dice < 8) {
                      String name = "t" + thread + "-" + written++;
                      tardis.write(key(id), ChangeSequence.of(set("name", name)));
                      names[id] = name;
                    } else {
                      Map<String, Object> read = tardis.read(key(id)).orElseThrow().fields();
                      if (((Number) read.get("score")).longValue() != scores[id]
                          || !names[id].equals(read.get("name"))) {
                        failures.add(
                            "read "
                                + read
                                + " of "
                                + id
                                + ", acknowledged "
                                + scores[id]
                                + " "
                                + names[id]);
                      }
                      checkedReads.incrementAndGet();
                    }
                  } catch (TardisUnavailableException uncachedDuringTheOutage) {
                    // a miss in failed mode: allowed
                  } catch (RuntimeException failed) {
                    failures.add("document " + id + ": " + failed);
                  }
                }
              },
              "writer-" + t);
      writers.add(writer);
      writer.start();
    }
    Thread.sleep(1500);
    faulty.down.set(true);
    awaitOrFail(
        () -> tardis.metrics().failedWritesAbsorbed() >= 20, "writes buffered in the outage");
    Thread.sleep(1500);
    faulty.down.set(false);
    Thread.sleep(1500);
    stop.set(true);
    for (Thread writer : writers) {
      writer.join(TimeUnit.SECONDS.toMillis(60));
    }

    awaitRecovered(tardis);
    assertThat(failures).isEmpty();
    assertThat(checkedReads.get()).isPositive();
    for (int id = 0; id < DOCUMENTS; id++) {
      assertThat(score(mysql, id)).as("increments of %d, each once", id).isEqualTo(scores[id]);
      assertThat(name(mysql, id)).as("last name of %d", id).isEqualTo(names[id]);
    }
  }

  /**
   * (b) Recon, §4.4.1's two races: one instance, whose database is down, buffers writes to documents nobody cached;
   * another, in normal mode over the same memcached, must apply them before it serves a miss and before it writes.
   */
  @Test
  void anInstanceInNormalModeAppliesAnotherInstancesBufferedWriteFirst() throws Exception {
    ReconRun outcome = meetDocumentsAnotherBuffered(builder -> builder);

    assertThat(outcome.profileRead()).as("the miss").isEqualTo("profile");
    assertThat(outcome.finalName()).as("the newer write").isEqualTo("photo");
    assertThat(outcome.finalScore()).as("the buffered increment, then the new one").isEqualTo(11);
  }

  /** The control: without Recon's check the miss reads stale and the older buffered write undoes the newer one. */
  @Test
  void withoutReconsCheckAMissReadsStaleAndAnUpdateIsLost() throws Exception {
    ReconRun outcome =
        meetDocumentsAnotherBuffered(Tardis.Builder::withoutLookingForBufferedWrites);

    assertThat(outcome.profileRead()).as("the miss read stale").isEqualTo("u6");
    assertThat(outcome.finalName()).as("the newer write was lost").isEqualTo("album");
  }

  private record ReconRun(String profileRead, String finalName, long finalScore) {}

  private ReconRun meetDocumentsAnotherBuffered(UnaryOperator<Tardis.Builder> normalSettings)
      throws Exception {
    memcached = StockMemcached.start(1, 64);
    Tardis failed = build(memcached.client, faulty, builder -> builder.drainThreads(0));
    Tardis normal =
        build(
            memcached.anotherClient(),
            mysql,
            builder -> normalSettings.apply(builder.drainThreads(0)));
    faulty.down.set(true);
    failed.write(key(5), ChangeSequence.of(set("name", "album"), inc("score", 1)));
    failed.write(key(6), ChangeSequence.of(set("name", "profile")));
    assertThat(failed.mode()).isEqualTo(Mode.FAILED);
    assertThat(normal.mode()).isEqualTo(Mode.NORMAL);

    String profileRead = (String) normal.read(key(6)).orElseThrow().fields().get("name");
    normal.write(key(5), ChangeSequence.of(set("name", "photo"), inc("score", 10)));
    assertThat(normal.mode()).as("a per-document matter: the mode stays").isEqualTo(Mode.NORMAL);

    faulty.down.set(false);
    Tardis recovering = build(memcached.anotherClient(), mysql, builder -> builder.drainThreads(1));
    awaitOrFail(() -> recovering.metrics().bufferedDocuments() == 0, "recovery");
    return new ReconRun(profileRead, name(mysql, 5), score(mysql, 5));
  }

  /**
   * (c) A memcached run with {@code -M} and little memory fills up during an outage: the write it cannot buffer is
   * refused with {@link BufferRefusedException.Limit#SERVER_MEMORY}, and every write acknowledged before it
   * reaches the database once it is back.
   */
  @Test
  void aFullMemcachedRefusesATeleportWithItsReasonAndLosesNothingAcknowledged() throws Exception {
    memcached = StockMemcached.start(1, 2);
    Tardis tardis = build(memcached.client, faulty, builder -> builder.drainThreads(1));
    faulty.down.set(true);
    List<Integer> acknowledged = new ArrayList<>();
    BufferRefusedException refusal = null;
    int id = 1000;
    for (; id < 4000 && refusal == null; id++) {
      try {
        tardis.write(key(id), ChangeSequence.of(insert(Map.of("name", "n" + id, "bio", bio(id)))));
        acknowledged.add(id);
      } catch (BufferRefusedException refused) {
        refusal = refused;
      }
    }

    assertThat(refusal)
        .as("a refusal within 3,000 writes of %d KiB", bio(0).length() / 1024)
        .isNotNull();
    assertThat(refusal.limit()).isEqualTo(BufferRefusedException.Limit.SERVER_MEMORY);
    assertThat(refusal)
        .hasMessageContaining("out of memory")
        .hasMessageContaining("not acknowledged");
    assertThat(acknowledged).isNotEmpty();
    int refusedId = id - 1;
    faulty.down.set(false);
    awaitRecovered(tardis);
    for (int written : acknowledged) {
      Entity row = mysql.read(key(written)).orElseThrow();
      assertThat(row.fields()).containsEntry("bio", bio(written));
    }
    assertThat(mysql.read(key(refusedId))).as("the refused write").isEmpty();
    assertThat(tardis.metrics().teleportsRefused()).isEqualTo(1);
  }

  /**
   * (e) Replica repair on memcached: buffered writes kept on both of two servers survive a rolling restart, one
   * server after the other, because the repair tells a restarted memcached by its {@code stats} (pid and start time)
   * and gives it its copies back (buffered writes under their locks, listings by {@code add}/{@code append}).
   */
  @Test
  void bufferedWritesSurviveARollingRestartOfTheMemcachedServers() throws Exception {
    memcached = StockMemcached.start(2, 64);
    Tardis tardis =
        build(
            memcached.client,
            faulty,
            builder ->
                builder.replicas(2).drainThreads(1).replicaCheckInterval(Duration.ofMillis(200)));
    faulty.down.set(true);
    for (int id = 0; id < 4; id++) {
      tardis.write(key(id), ChangeSequence.of(set("name", "kept " + id), inc("score", id)));
    }

    for (int server = 0; server < 2; server++) {
      memcached.restart(server);
      int restarted = server;
      awaitOrFail(() -> holdsEveryBufferedWrite(restarted), "copies back on server " + server);
    }

    faulty.down.set(false);
    awaitRecovered(tardis);
    for (int id = 0; id < 4; id++) {
      assertThat(name(mysql, id)).isEqualTo("kept " + id);
      assertThat(score(mysql, id)).isEqualTo(id);
    }
  }

  /** Whether server {@code index} holds a copy of the 4 documents' buffered writes, and lists them. */
  private boolean holdsEveryBufferedWrite(int index) {
    IqClient client = memcached.client;
    ServerAddress server = memcached.addresses().get(index);
    try {
      boolean writes =
          IntStream.range(0, 4)
              .allMatch(id -> client.servers().getOn(server, "TW:users:i" + id).isPresent());
      long listed =
          IntStream.range(0, PARTITIONS)
              .mapToObj(i -> client.servers().getOn(server, "PendingWrites:tardis:" + i))
              .flatMap(Optional::stream)
              .mapToLong(log -> log.text().lines().filter(line -> line.startsWith("+")).count())
              .sum();
      return writes && listed >= 4;
    } catch (RuntimeException notYet) {
      return false;
    }
  }

  /** 20 KiB, different per document. */
  private static String bio(int id) {
    String unit = id + ":";
    return unit.repeat(20 * 1024 / unit.length() + 1).substring(0, 20 * 1024);
  }

  /**
   * (d) Writer A reads the cached copy under its lock and is held before its database write for longer than its lock
   * lives; B takes the lock meanwhile, increments and refreshes the copy. A's refresh, computed from the copy it
   * read, is refused by the {@code cas}, so A drops the copy: the next read equals the database.
   */
  @Test
  void aWriterPausedPastItsLockTtlCannotOverwriteANewerCachedCopy() throws Exception {
    PausedWriter run = writerPausedPastItsLock(builder -> builder);

    assertThat(run.read()).isEqualTo(run.database());
    assertThat(run.database()).containsEntry("name", "paused").containsEntry("score", 5);
  }

  /** The control: with plain {@code set}s the paused writer's refresh overwrites B's, and reads go stale. */
  @Test
  void withUnconditionalChangesAPausedWritersCachedCopyIsStale() throws Exception {
    PausedWriter run = writerPausedPastItsLock(Tardis.Builder::changingCachedValuesUnconditionally);

    assertThat(run.database()).containsEntry("name", "paused").containsEntry("score", 5);
    assertThat(run.read()).isNotEqualTo(run.database());
  }

  private record PausedWriter(Map<String, Object> read, Map<String, Object> database) {}

  private PausedWriter writerPausedPastItsLock(UnaryOperator<Tardis.Builder> settings)
      throws Exception {
    memcached = StockMemcached.start(1, 64);
    Duration shortLock = Duration.ofSeconds(2);
    FaultyStore pausing = new FaultyStore(mysql);
    Tardis a =
        build(
            memcached.client,
            pausing,
            builder -> settings.apply(builder.stockMemcached(shortLock).drainThreads(0)));
    Tardis b =
        build(
            memcached.anotherClient(),
            mysql,
            builder -> settings.apply(builder.stockMemcached(shortLock).drainThreads(0)));
    a.read(key(1)); // cached
    pausing.pauseNextApply.set(shortLock.plusSeconds(2).toMillis());
    List<RuntimeException> failedA = Collections.synchronizedList(new ArrayList<>());
    Thread writerA =
        new Thread(
            () -> {
              try {
                a.write(key(1), ChangeSequence.of(set("name", "paused")));
              } catch (RuntimeException failed) {
                failedA.add(failed);
              }
            },
            "paused-writer");
    writerA.start();
    awaitOrFail(() -> pausing.pausedApplies.get() == 1, "A to hold its lock, paused");

    b.write(key(1), ChangeSequence.of(inc("score", 5)));
    writerA.join(TimeUnit.SECONDS.toMillis(60));

    assertThat(failedA).as("A's write is acknowledged").isEmpty();
    Map<String, Object> read = b.read(key(1)).orElseThrow().fields();
    Map<String, Object> database = mysql.read(key(1)).orElseThrow().fields();
    return new PausedWriter(
        Map.of("name", read.get("name"), "score", ((Number) read.get("score")).intValue()),
        Map.of("name", database.get("name"), "score", ((Number) database.get("score")).intValue()));
  }

  private Tardis build(IqClient client, DataStore store, UnaryOperator<Tardis.Builder> settings) {
    Tardis tardis =
        settings
            .apply(
                Tardis.builder()
                    .replicas(1)
                    .cache(client)
                    .store(store)
                    .stockMemcached(LOCK_TTL)
                    .technique(Technique.TARDIS)
                    .partitions(PARTITIONS)
                    .checkInterval(Duration.ofMillis(100)))
            .build();
    opened.add(tardis);
    return tardis;
  }
}
