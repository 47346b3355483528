package io.dendrite.writeback.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.testsupport.cache.StockMemcached;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link RedleaseLocks} and {@link PinnedReplicas#unpinned} on two real, unmodified memcached servers ({@code -M}),
 * every value on both: locks exclude, release only their own lock key, and a holder paused past its lock's lifetime
 * is refused instead of overwriting a newer value (control: unconditional changes overwrite it).
 */
class RedleaseLocksIT {
  /** Long enough that a holder on a busy machine commits well within it; a paused one sleeps past it. */
  private static final Duration TTL = Duration.ofSeconds(3);

  private static StockMemcached memcached;
  private static PinnedReplicas replicas;

  @BeforeAll
  static void start() {
    memcached = StockMemcached.start(2, 64);
    replicas = PinnedReplicas.unpinned(memcached.client, 2);
  }

  @AfterAll
  static void stop() {
    memcached.close();
  }

  @Test
  void aLockIsAKeyOnEveryReplicaAndASecondTakerWaitsForItsRelease() {
    RedleaseLocks locks = new RedleaseLocks(replicas, TTL, Duration.ofMillis(300));
    String key = key("held");

    BufferedWriteLocks.Locked first = locks.lock(List.of(key));
    assertThat(lockCopies(key)).as("one lock key per replica server").hasSize(2);
    assertThatThrownBy(() -> locks.lock(List.of(key)))
        .isInstanceOf(IqException.class)
        .hasMessageContaining("could not lock " + key);
    first.close();

    assertThat(lockCopies(key)).as("released on both").isEmpty();
    locks.lock(List.of(key)).close();
  }

  /**
   * With one replica of two servers a key's lock lives on the key's server, which is often not where the lock key
   * itself would be placed: taking and reading it back must ask that server.
   */
  @Test
  void withOneReplicaEachLockLivesOnItsKeysServer() {
    PinnedReplicas single = PinnedReplicas.unpinned(memcached.client, 1);
    RedleaseLocks locks = new RedleaseLocks(single, TTL, Duration.ofSeconds(10));
    for (int i = 0; i < 20; i++) {
      String key = key("single-" + i);
      BufferedWriteLocks.Locked lock = locks.lock(List.of(key));
      lock.stage(key, bytes("v" + i));
      assertThat(lock.commit()).isEqualTo(Outcome.OK);
      assertThat(single.get(key).map(String::new)).contains("v" + i);
    }
  }

  @Test
  void aHolderChangesAndDeletesTheValueOnEveryReplica() {
    RedleaseLocks locks = new RedleaseLocks(replicas, TTL, Duration.ofSeconds(10));
    String key = key("changed");

    BufferedWriteLocks.Locked creating = locks.lock(List.of(key));
    assertThat(creating.values()).isEmpty();
    creating.stage(key, bytes("one"));
    assertThat(creating.commit()).isEqualTo(Outcome.OK);
    assertThat(copies(key)).containsOnly("one", "one");

    BufferedWriteLocks.Locked changing = locks.lock(List.of(key));
    assertThat(changing.values()).containsKey(key);
    changing.stage(key, bytes("two"));
    assertThat(changing.commit()).isEqualTo(Outcome.OK);
    assertThat(copies(key)).containsOnly("two", "two");

    BufferedWriteLocks.Locked deleting = locks.lock(List.of(key));
    deleting.stage(key, null);
    assertThat(deleting.commit()).isEqualTo(Outcome.OK);
    assertThat(copies(key)).isEmpty();
    assertThat(lockCopies(key)).as("each commit released its locks").isEmpty();
  }

  @Test
  void aHolderPausedPastItsLockTtlCannotOverwriteANewerValue() throws Exception {
    String key = key("paused");
    assertThatThrownBy(
            () ->
                pausedHolderOverwrites(
                    new RedleaseLocks(replicas, TTL, Duration.ofSeconds(10)), key))
        .isInstanceOf(LeaseLostException.class);
    assertThat(copies(key)).as("the newer holder's value stays").containsOnly("newer", "newer");
  }

  /** The control: changes that are not conditional on what was read let the paused holder undo the newer value. */
  @Test
  void withUnconditionalChangesAPausedHolderOverwritesANewerValue() throws Exception {
    String key = key("paused-unconditional");
    pausedHolderOverwrites(RedleaseLocks.unconditional(replicas, TTL, Duration.ofSeconds(10)), key);
    assertThat(copies(key)).as("the newer value is lost").containsOnly("stale", "stale");
  }

  /**
   * Holder A locks and reads, pauses past its lock's lifetime; B takes the lock and writes "newer"; then A commits
   * "stale", computed from what it read.
   */
  private static void pausedHolderOverwrites(RedleaseLocks locks, String key) throws Exception {
    replicas.set(key, bytes("older"));
    BufferedWriteLocks.Locked paused = locks.lock(List.of(key));
    assertThat(paused.values()).containsKey(key);
    Thread.sleep(TTL.plusSeconds(1).toMillis()); // memcached's clock: a lock lives at most TTL

    BufferedWriteLocks.Locked newer = locks.lock(List.of(key));
    newer.stage(key, bytes("newer"));
    assertThat(newer.commit()).isEqualTo(Outcome.OK);

    paused.stage(key, bytes("stale"));
    paused.commit();
  }

  @Test
  void aHolderWhoseLockLapsedDoesNotReleaseTheNextHoldersLock() throws Exception {
    RedleaseLocks locks = new RedleaseLocks(replicas, TTL, Duration.ofSeconds(10));
    String key = key("lapsed");
    BufferedWriteLocks.Locked lapsed = locks.lock(List.of(key));
    Thread.sleep(TTL.plusSeconds(1).toMillis());
    BufferedWriteLocks.Locked next = locks.lock(List.of(key));

    lapsed.close();

    assertThat(lockCopies(key)).as("the next holder's locks stay").hasSize(2);
    RedleaseLocks impatient = new RedleaseLocks(replicas, TTL, Duration.ofMillis(300));
    assertThatThrownBy(() -> impatient.lock(List.of(key))).isInstanceOf(IqException.class);
    next.close();
  }

  @Test
  void listingsAreAppendedAndRemovedWithPlainCommands() {
    PendingWritesPartition partition = new PendingWritesPartition(replicas, key("partition"));

    assertThat(partition.add("TW:users:l1", Instant.now())).isEqualTo(Outcome.OK);
    assertThat(partition.add("TW:users:l2", Instant.now())).isEqualTo(Outcome.OK);

    List<PendingWritesPartition.Entry> listed = partition.entries();
    assertThat(listed).extracting(entry -> entry.key().id()).containsExactlyInAnyOrder(1L, 2L);
    Map<PendingWritesPartition, PendingWritesPartition.Found> found =
        PendingWritesPartition.listingsOf(replicas, List.of(partition), List.of("TW:users:l1"));
    PendingWritesPartition.Found first = found.get(partition);
    partition.remove(first.listings(), first.read());
    assertThat(partition.entries()).extracting(entry -> entry.key().id()).containsExactly(2L);
    assertThat(replicas.getAllOnEach(List.of(partition.key())).get(partition.key()))
        .as("both replicas hold the log")
        .hasSize(2);
  }

  private static List<String> copies(String key) {
    return replicas.getAllOnEach(List.of(key)).getOrDefault(key, Map.of()).values().stream()
        .map(CacheValue::text)
        .toList();
  }

  /** The servers holding {@code key}'s lock: its replica servers (not the lock key's own placement). */
  private static List<ServerAddress> lockCopies(String key) {
    return replicas.serversFor(key).stream()
        .filter(
            server ->
                memcached.client.servers().getOn(server, RedleaseLocks.PREFIX + key).isPresent())
        .toList();
  }

  /** Unique per run: the servers outlive no run, but tests share them. */
  private static String key(String what) {
    return what + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
