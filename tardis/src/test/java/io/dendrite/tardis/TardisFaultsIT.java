package io.dendrite.tardis;

import static io.dendrite.tardis.UsersTable.awaitOrFail;
import static io.dendrite.tardis.UsersTable.awaitRecovered;
import static io.dendrite.tardis.UsersTable.key;
import static io.dendrite.tardis.UsersTable.name;
import static io.dendrite.tardis.UsersTable.score;
import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.engine.BufferRefusedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One failure at a time, on a real MariaDB behind {@link FaultyStore}'s switches and real IQ servers: a write whose
 * reply was lost, a miss while the database is down, a document another instance buffered, pinned memory running
 * out. Each ends with the database checked against the acknowledged writes.
 */
@ExtendWith(RealServers.class)
class TardisFaultsIT {
  private static final int DOCUMENTS = 8;

  /** Every instance over one cache tier must list in the same partitions. */
  private static final int PARTITIONS = 4;

  private MySqlStore mysql;
  private FaultyStore faulty;
  private EmbeddedIqServers cache;
  private final List<Tardis> opened = new ArrayList<>();

  @BeforeEach
  void seed(MySqlTestDatabase database) throws Exception {
    mysql = UsersTable.seed(database, DOCUMENTS, "");
    faulty = new FaultyStore(mysql);
  }

  @AfterEach
  void close() {
    opened.forEach(Tardis::close);
    if (cache != null) {
      cache.close();
    }
    mysql.close();
  }

  @Test
  void anIncrementWhoseReplyWasLostIsNeitherBufferedNorAcknowledged() throws Exception {
    Tardis tardis = tardis(cacheOf(64L << 20), Technique.TARDIS, builder -> builder);
    tardis.read(key(1));
    faulty.loseRepliesOfApplies.set(1);

    assertThatThrownBy(() -> tardis.write(key(1), ChangeSequence.of(inc("score", 1))))
        .isInstanceOf(TardisOutcomeUnknownException.class)
        .hasMessageContaining("not acknowledged");
    assertThat(tardis.mode()).isEqualTo(Mode.FAILED);
    tardis.write(key(1), ChangeSequence.of(inc("score", 1))); // buffered, acknowledged

    awaitRecovered(tardis);
    assertThat(score(mysql, 1))
        .as("the lost reply's increment once, the buffered one once")
        .isEqualTo(2);
    assertThat(tardis.read(key(1)).orElseThrow().fields()).containsEntry("score", 2);
    assertThat(tardis.metrics().outcomeUnknown()).isEqualTo(1);
  }

  /** The control of the test above: buffering an increment the store may have applied applies it twice. */
  @Test
  void bufferingAnIncrementWhoseReplyWasLostAppliesItTwice() throws Exception {
    Tardis tardis =
        tardis(cacheOf(64L << 20), Technique.TARDIS, Tardis.Builder::bufferUnknownOutcomes);
    faulty.loseRepliesOfApplies.set(1);

    tardis.write(key(1), ChangeSequence.of(inc("score", 1)));
    tardis.write(key(1), ChangeSequence.of(inc("score", 1)));

    awaitRecovered(tardis);
    assertThat(score(mysql, 1)).as("two acknowledged increments, one applied twice").isEqualTo(3);
  }

  @Test
  void aSetWhoseReplyWasLostIsBufferedAndAcknowledged() throws Exception {
    Tardis tardis = tardis(cacheOf(64L << 20), Technique.TARDIS, builder -> builder);
    faulty.loseRepliesOfApplies.set(1);

    tardis.write(key(2), ChangeSequence.of(set("name", "kept")));

    assertThat(tardis.mode()).isEqualTo(Mode.FAILED);
    assertThat(tardis.metrics().failedWritesAbsorbed()).isEqualTo(1);
    awaitRecovered(tardis);
    assertThat(name(mysql, 2)).isEqualTo("kept");
  }

  @Test
  void duringAnOutageAHitIsServedWithTheBufferedWriteAndAMissIsUnavailable() throws Exception {
    Tardis tardis = tardis(cacheOf(64L << 20), Technique.TARDIS, builder -> builder);
    tardis.read(key(3)); // cached; key 4 is not
    faulty.down.set(true);

    tardis.write(key(3), ChangeSequence.of(set("name", "while down"), inc("score", 5)));

    assertThat(tardis.read(key(3)).orElseThrow().fields())
        .containsEntry("name", "while down")
        .containsEntry("score", 5);
    assertThatThrownBy(() -> tardis.read(key(4)))
        .isInstanceOf(TardisUnavailableException.class)
        .hasMessageContaining("failed mode");
    assertThat(name(mysql, 3)).as("nothing reached the database yet").isEqualTo("u3");

    faulty.down.set(false);
    awaitRecovered(tardis);
    assertThat(name(mysql, 3)).isEqualTo("while down");
    assertThat(score(mysql, 3)).isEqualTo(5);
    assertThat(tardis.read(key(4)).orElseThrow().fields()).containsEntry("name", "u4");
  }

  /**
   * Two instances, as two processes, with different views of the database: one buffers a write to a document that
   * is not cached; the other, in normal mode, must not read or write past it (§4.4.1's races). TAR refuses the
   * miss; TARDIS applies the buffered write first, for the miss and for a write.
   */
  @Test
  void anInstanceInNormalModeMeetsADocumentAnotherBuffered() throws Exception {
    EmbeddedIqServers servers = cacheOf(64L << 20);
    Tardis tar =
        Tardis.builder()
            .replicas(1)
            .cache(servers.anotherClient())
            .store(mysql)
            .technique(Technique.TAR)
            .partitions(PARTITIONS)
            .drainThreads(0)
            .build();
    opened.add(tar);
    Tardis tardis =
        Tardis.builder()
            .replicas(1)
            .cache(servers.anotherClient())
            .store(mysql)
            .technique(Technique.TARDIS)
            .partitions(PARTITIONS)
            .drainThreads(0)
            .build();
    opened.add(tardis);
    Tardis failed = tardis(servers, Technique.TARDIS, builder -> builder.drainThreads(0));
    faulty.down.set(true);
    failed.write(key(5), ChangeSequence.of(set("name", "album"), inc("score", 1)));
    failed.write(key(6), ChangeSequence.of(set("name", "profile")));
    assertThat(failed.mode()).isEqualTo(Mode.FAILED);
    assertThat(tar.mode()).isEqualTo(Mode.NORMAL);
    assertThat(tardis.mode()).isEqualTo(Mode.NORMAL);

    assertThatThrownBy(() -> tar.read(key(6))).isInstanceOf(TardisUnavailableException.class);
    assertThat(tardis.read(key(6)).orElseThrow().fields()).containsEntry("name", "profile");
    tardis.write(key(5), ChangeSequence.of(inc("score", 10)));

    assertThat(score(mysql, 5)).as("the buffered increment first, then the new one").isEqualTo(11);
    assertThat(name(mysql, 5)).isEqualTo("album");
    assertThat(name(mysql, 6)).isEqualTo("profile");
    assertThat(tardis.mode()).as("a per-document matter: the mode stays").isEqualTo(Mode.NORMAL);
  }

  /**
   * A newer write by an instance in normal mode wins over an older buffered one: with Recon's check it applies the
   * buffered write first; without it (the control) the buffered write is applied after it and undoes it.
   */
  @Test
  void aNewerWriteInNormalModeIsNotUndoneByAnOlderBufferedOne() throws Exception {
    assertThat(nameAfterANewerWriteInNormalMode(builder -> builder)).isEqualTo("photo");
  }

  @Test
  void withoutReconsCheckAnOlderBufferedWriteUndoesANewerOne() throws Exception {
    assertThat(nameAfterANewerWriteInNormalMode(Tardis.Builder::withoutLookingForBufferedWrites))
        .isEqualTo("album");
  }

  private String nameAfterANewerWriteInNormalMode(UnaryOperator<Tardis.Builder> settings)
      throws Exception {
    EmbeddedIqServers servers = cacheOf(64L << 20);
    Tardis normal =
        settings
            .apply(
                Tardis.builder()
                    .replicas(1)
                    .cache(servers.anotherClient())
                    .store(mysql)
                    .technique(Technique.TARDIS)
                    .partitions(PARTITIONS)
                    .drainThreads(0))
            .build();
    opened.add(normal);
    Tardis failed = tardis(servers, Technique.TARDIS, builder -> builder.drainThreads(0));
    faulty.down.set(true);
    failed.write(key(7), ChangeSequence.of(set("name", "album")));

    normal.write(key(7), ChangeSequence.of(set("name", "photo")));
    faulty.down.set(false);
    Tardis recovering =
        Tardis.builder()
            .replicas(1)
            .cache(servers.anotherClient())
            .store(mysql)
            .partitions(PARTITIONS)
            .drainThreads(1)
            .build();
    opened.add(recovering);
    awaitOrFail(() -> recovering.metrics().bufferedDocuments() == 0, "recovery");
    return name(mysql, 7);
  }

  /**
   * A write slower than its document's Q lease (the database took longer than the lease lifetime): a server that
   * keeps the value when a Q lease lapses (IQ-Twemcached, or ours with {@code lapseDropsValue(false)}) drops the
   * refreshed copy with the lapsed lease and keeps the old one, which lacks the acknowledged write, so the write
   * deletes it. Its control keeps it: the next read is a stale hit. TardisOutageIT found this under a busy machine.
   */
  @Test
  void aWriteThatOutlivesItsLeaseLeavesNoStaleCopy() throws Exception {
    assertThat(scoreReadAfterAWriteOutlivingItsLease(false, settings -> settings)).isEqualTo(1);
  }

  @Test
  void keepingTheCopyOfAWriteThatOutlivedItsLeaseReadsStale() throws Exception {
    assertThat(
            scoreReadAfterAWriteOutlivingItsLease(
                false, Tardis.Builder::changingCachedValuesUnconditionally))
        .isEqualTo(0);
  }

  /**
   * Our servers by default take the old copy away with the lapsed lease (issue 37: a writer may have died after its
   * database write), so even a writer that keeps the copy leaves nothing stale.
   */
  @Test
  void aServerThatDropsTheValueOnALapseLeavesNoStaleCopyEvenUndeleted() throws Exception {
    assertThat(
            scoreReadAfterAWriteOutlivingItsLease(
                true, Tardis.Builder::changingCachedValuesUnconditionally))
        .isEqualTo(1);
  }

  private Object scoreReadAfterAWriteOutlivingItsLease(
      boolean lapseDropsValue, UnaryOperator<Tardis.Builder> settings) throws Exception {
    Tardis tardis = tardisOnOneServer(Duration.ofSeconds(1), lapseDropsValue, settings);
    tardis.read(key(2)); // cached, score 0
    faulty.pauseNextApply.set(2_500);

    tardis.write(key(2), ChangeSequence.of(inc("score", 1)));

    assertThat(score(mysql, 2)).as("the database").isEqualTo(1);
    return tardis.read(key(2)).orElseThrow().fields().get("score");
  }

  @Test
  void aRecoveryWorkerAppliesItsAlphaDocumentsInOneStoreRound() throws Exception {
    assertThat(batchesOfARecovery(builder -> builder)).containsExactly(DOCUMENTS);
  }

  @Test
  void oneDocumentPerRoundTakesAStoreRoundPerDocument() throws Exception {
    assertThat(batchesOfARecovery(builder -> builder.storeRound(1)))
        .hasSize(DOCUMENTS)
        .containsOnly(1);
  }

  /** The sizes of the applies a recovery worker made of {@link #DOCUMENTS} buffered documents in one partition. */
  private List<Integer> batchesOfARecovery(UnaryOperator<Tardis.Builder> settings)
      throws Exception {
    Tardis tardis =
        tardis(
            cacheOf(64L << 20),
            Technique.TARDIS,
            builder -> settings.apply(builder.partitions(1).drainBatch(DOCUMENTS)));
    faulty.down.set(true);
    for (int id = 0; id < DOCUMENTS; id++) {
      tardis.write(key(id), ChangeSequence.of(inc("score", 1)));
    }
    assertThat(tardis.metrics().bufferedDocuments()).isEqualTo(DOCUMENTS);

    faulty.down.set(false);
    awaitRecovered(tardis);
    for (int id = 0; id < DOCUMENTS; id++) {
      assertThat(score(mysql, id)).as("document %d", id).isEqualTo(1);
    }
    return faulty.appliedBatchSizes;
  }

  /**
   * A writer queued behind another write of its document, which holds the document's lease while its database
   * write takes longer than the cache client's backoff deadline (2 s): as the writers behind the one that finds an
   * outage do, for the store's whole timeout.
   */
  @Test
  void aWriterQueuedBehindASlowWriteOfItsDocumentWaitsItOut() throws Exception {
    assertThat(secondWriteBehindASlowOne(builder -> builder)).isNull();
    assertThat(score(mysql, 3)).isEqualTo(2);
  }

  @Test
  void aLeaseWaitShorterThanTheSlowWriteFailsTheWriterQueuedBehindIt() throws Exception {
    assertThat(secondWriteBehindASlowOne(builder -> builder.lockTimeout(Duration.ofMillis(500))))
        .isInstanceOf(io.dendrite.iq.client.IqException.class)
        .hasMessageContaining("kept the lease");
    assertThat(score(mysql, 3)).isEqualTo(1);
  }

  /** What the second of two writes of one document threw (null if nothing), the first paused 3 s in the store. */
  private Throwable secondWriteBehindASlowOne(UnaryOperator<Tardis.Builder> settings)
      throws Exception {
    Tardis tardis = tardisOnOneServer(Duration.ofSeconds(30), true, settings);
    tardis.read(key(3));
    faulty.pauseNextApply.set(3_000);
    ExecutorService first = Executors.newSingleThreadExecutor();
    try {
      Future<?> slow = first.submit(() -> tardis.write(key(3), ChangeSequence.of(inc("score", 1))));
      awaitOrFail(() -> faulty.pausedApplies.get() == 1, "the first write in the store");
      Throwable second = null;
      try {
        tardis.write(key(3), ChangeSequence.of(inc("score", 1)));
      } catch (RuntimeException failed) {
        second = failed;
      }
      slow.get(30, TimeUnit.SECONDS);
      assertThat(tardis.mode()).as("no write failed over to buffering").isEqualTo(Mode.NORMAL);
      return second;
    } finally {
      first.shutdownNow();
    }
  }

  @Test
  void writesPastThePinnedBudgetAreRefusedAndNothingAcknowledgedIsLost() throws Exception {
    Tardis tardis =
        tardis(cacheOf(64L << 20), Technique.TARDIS, builder -> builder.pinnedBudgetBytes(600));
    faulty.down.set(true);
    List<Integer> acknowledged = new ArrayList<>();
    BufferRefusedException refusal = null;
    for (int id = 0; id < DOCUMENTS && refusal == null; id++) {
      try {
        tardis.write(key(id), ChangeSequence.of(set("name", "long outage " + id)));
        acknowledged.add(id);
      } catch (BufferRefusedException refused) {
        refusal = refused;
      }
    }

    assertThat(refusal).as("a refusal within %d writes", DOCUMENTS).isNotNull();
    assertThat(refusal.limit()).isEqualTo(BufferRefusedException.Limit.PINNED_BUDGET);
    assertThat(refusal).hasMessageContaining("pinned budget");
    assertThat(acknowledged).isNotEmpty();
    int refusedId = acknowledged.size();
    faulty.down.set(false);
    awaitRecovered(tardis);
    for (int id : acknowledged) {
      assertThat(name(mysql, id)).isEqualTo("long outage " + id);
    }
    assertThat(name(mysql, refusedId)).as("the refused write").isEqualTo("u" + refusedId);
    assertThat(tardis.metrics().teleportsRefused()).isEqualTo(1);
  }

  @Test
  void aCacheServerOutOfPinnedMemoryRefusesWithThatReason() throws Exception {
    Tardis tardis = tardis(cacheOf(600), Technique.TARDIS, builder -> builder);
    faulty.down.set(true);
    BufferRefusedException refusal = null;
    List<Integer> acknowledged = new ArrayList<>();
    String filler = "x".repeat(200);
    for (int id = 0; id < DOCUMENTS && refusal == null; id++) {
      try {
        tardis.write(key(id), ChangeSequence.of(set("name", filler.substring(0, 60) + id)));
        acknowledged.add(id);
      } catch (BufferRefusedException refused) {
        refusal = refused;
      }
    }

    assertThat(refusal).as("a refusal within %d writes", DOCUMENTS).isNotNull();
    assertThat(refusal.limit()).isEqualTo(BufferRefusedException.Limit.SERVER_PINNED_MEMORY);
    faulty.down.set(false);
    awaitRecovered(tardis);
    for (int id : acknowledged) {
      assertThat(name(mysql, id)).isEqualTo(filler.substring(0, 60) + id);
    }
  }

  @Test
  void anInstanceWithAnotherPartitionCountIsRefused() {
    EmbeddedIqServers servers = cacheOf(64L << 20);
    tardis(servers, Technique.TARDIS, builder -> builder);

    assertThatThrownBy(
            () ->
                Tardis.builder()
                    .replicas(1)
                    .cache(servers.anotherClient())
                    .store(mysql)
                    .partitions(PARTITIONS * 2)
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("buffered writes in " + PARTITIONS + " partitions")
        .hasMessageContaining("built with " + PARTITIONS * 2);
  }

  /**
   * A TARDIS instance on one IQ server granting leases of {@code leaseLifetime}, which drops a value whose Q lease
   * lapses or keeps it ({@code lapseDropsValue}).
   */
  private Tardis tardisOnOneServer(
      Duration leaseLifetime, boolean lapseDropsValue, UnaryOperator<Tardis.Builder> settings) {
    cache =
        EmbeddedIqServers.builder()
            .count(1)
            .pinnedMemoryBytes(64L << 20)
            .leaseLifetime(leaseLifetime)
            .server(server -> server.lapseDropsValue(lapseDropsValue))
            .start();
    return tardis(cache, Technique.TARDIS, settings);
  }

  private EmbeddedIqServers cacheOf(long pinnedBytes) {
    cache = EmbeddedIqServers.builder().count(2).pinnedMemoryBytes(pinnedBytes).start();
    return cache;
  }

  private Tardis tardis(
      EmbeddedIqServers servers, Technique technique, UnaryOperator<Tardis.Builder> settings) {
    Tardis tardis =
        settings
            .apply(
                Tardis.builder()
                    .replicas(1)
                    .cache(servers.client)
                    .store(faulty)
                    .technique(technique)
                    .partitions(PARTITIONS)
                    .drainThreads(1)
                    .checkInterval(Duration.ofMillis(100)))
            .build();
    opened.add(tardis);
    return tardis;
  }
}
