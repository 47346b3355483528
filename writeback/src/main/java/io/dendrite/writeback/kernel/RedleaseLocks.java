package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.ServerCommands;
import io.dendrite.iq.client.WriteOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Locks for stock memcached, which has no leases: Redlease-style lock keys (the TARDIS thesis, §4.3, footnote 3).
 *
 * <ul>
 *   <li><b>Taking.</b> {@code add Lock:<key>} with a random token and a time to live, on every replica server of
 *       every key, all in flight together, keys in one order every process shares. All or none: if any replica's
 *       lock is held by another, the ones taken are released and the taker backs off (1 ms doubling to 50 ms, with
 *       jitter) until {@code timeout}. Then the values and the locks are read back ({@code gets}): a lock that no
 *       longer carries the token lapsed already, and the taker starts over.
 *   <li><b>Changing.</b> A value changes only conditionally on what was read under the lock: {@code cas} with the
 *       unique read from that replica, {@code add} where the replica had none, {@code md <key> C<cas>} (memcached's
 *       meta delete, which needs no memory) to delete. So a holder that paused past the time to live, while another
 *       took the lock and changed the value, is refused ({@link LeaseLostException}) instead of overwriting the newer
 *       value. The first replica, in the order every process shares, is changed first and alone: whoever changes it
 *       first wins, and a holder refused there changed nothing.
 *   <li><b>Releasing.</b> {@code md Lock:<key> C<cas>} with the lock's own unique, so a holder whose lock lapsed and
 *       was taken by another never deletes the other's lock.
 * </ul>
 *
 * <p>Weaker than {@link BufferedWriteLocks#replicaLeases} on our servers: nothing fences what a holder does outside
 * the cache after its lock lapsed (a data-store apply), and a holder paused past the time to live can still change a
 * value nobody else changed meanwhile. Keep the time to live above the longest a holder keeps a lock (a store round).
 * A server that is down counts as holding no replica; one that does not answer in time makes takers wait, as with
 * leases.
 */
public final class RedleaseLocks implements BufferedWriteLocks {
  /** The prefix of lock keys: {@code Lock:<locked key>}. */
  public static final String PREFIX = "Lock:";

  private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final PinnedReplicas replicas;
  private final ServerCommands servers;
  private final WriteOptions lockOptions;
  private final Duration timeout;
  private final boolean conditional;

  /**
   * Locks whose keys lapse after {@code ttl} (at least 2 s: memcached counts whole seconds, so a lock lives between
   * {@code ttl} - 1 s and {@code ttl}); a taker waits up to {@code timeout} for a held lock.
   */
  public RedleaseLocks(PinnedReplicas replicas, Duration ttl, Duration timeout) {
    this(replicas, ttl, timeout, true);
  }

  private RedleaseLocks(
      PinnedReplicas replicas, Duration ttl, Duration timeout, boolean conditional) {
    if (ttl.compareTo(Duration.ofSeconds(2)) < 0) {
      throw new IllegalArgumentException(
          "a lock's time to live must be at least 2 s (memcached counts whole seconds), got "
              + ttl);
    }
    this.replicas = replicas;
    this.servers = replicas.cache().servers();
    this.lockOptions = WriteOptions.DEFAULT.withTtl(ttl);
    this.timeout = timeout;
    this.conditional = conditional;
  }

  /**
   * The same locks, but a holder's changes are plain {@code set}s and {@code delete}s, not conditional on what it
   * read. For the negative controls of tests only (a holder paused past its lock's lifetime then overwrites a newer
   * value): public only because TARDIS's tests, in another module, need it too.
   */
  public static RedleaseLocks unconditional(
      PinnedReplicas replicas, Duration ttl, Duration timeout) {
    return new RedleaseLocks(replicas, ttl, timeout, false);
  }

  @Override
  public Locked lock(List<String> keys) {
    List<String> ordered = keys.stream().distinct().sorted().toList();
    byte[] token =
        Long.toHexString(ThreadLocalRandom.current().nextLong())
            .getBytes(StandardCharsets.US_ASCII);
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = FIRST_PAUSE_NANOS;
    while (true) {
      Attempt attempt = tryLock(ordered, token);
      if (attempt.held() != null) {
        return attempt.held();
      }
      if (System.nanoTime() + pause > deadline) {
        throw new IqException("could not lock " + attempt.waitingFor() + " within " + timeout);
      }
      sleep(ThreadLocalRandom.current().nextLong(pause / 2, pause + 1));
      pause = Math.min(LONGEST_PAUSE_NANOS, pause * 2);
    }
  }

  /** One lock key on one replica server. */
  private record Claim(String key, ServerAddress server) {
    String lockKey() {
      return PREFIX + key;
    }
  }

  /** What one attempt to take the locks ended with: held, or what it waits for. */
  private record Attempt(Holding held, String waitingFor) {}

  /**
   * Adds every lock key at once; if all are taken, reads them back with the values.
   *
   * @throws ServerMemoryFullException when a server had no memory for a lock key (the ones taken are released)
   */
  private Attempt tryLock(List<String> keys, byte[] token) {
    Map<Claim, CompletableFuture<Outcome>> sent = new LinkedHashMap<>();
    for (String key : keys) {
      for (ServerAddress server : replicas.serversFor(key)) {
        Claim claim = new Claim(key, server);
        sent.put(claim, servers.addOnAsync(server, claim.lockKey(), token, lockOptions));
      }
    }
    List<Claim> taken = new ArrayList<>();
    String waitingFor = null;
    boolean memoryFull = false;
    RuntimeException failure = null;
    for (Map.Entry<Claim, CompletableFuture<Outcome>> added : sent.entrySet()) {
      Claim claim = added.getKey();
      try {
        Outcome outcome = join(added.getValue());
        if (outcome == Outcome.OK) {
          taken.add(claim);
        } else if (outcome == Outcome.NOT_STORED) {
          waitingFor = claim.key() + " (held by another)";
        } else if (outcome == Outcome.MEMORY_FULL) {
          memoryFull = true;
        } else {
          failure = new IqException("could not lock " + claim.key() + ": " + outcome);
        }
      } catch (IqConnectionException unreachable) {
        if (unreachable.timedOut() || !servers.isDown(claim.server())) {
          waitingFor =
              claim.key()
                  + " ("
                  + claim.server()
                  + " did not answer: "
                  + unreachable.getMessage()
                  + ")";
        }
        // Otherwise the server is down: its replica and any lock on it are gone.
      } catch (RuntimeException failed) {
        failure = failed;
      }
    }
    if (failure != null || memoryFull || waitingFor != null) {
      releaseUnread(taken, token);
      if (failure != null) {
        throw failure;
      }
      if (memoryFull) {
        throw new ServerMemoryFullException(
            "a cache server had no memory for the lock of " + keys + " (memcached -M is full)");
      }
      return new Attempt(null, waitingFor);
    }
    return readUnderLocks(keys, taken, token);
  }

  /**
   * Reads the values and the lock keys back, all in flight together: a lock that lost its token lapsed before it
   * could be read. A lock key is read on the server it was added to, which is its locked key's replica server, not
   * the lock key's own.
   */
  private Attempt readUnderLocks(List<String> keys, List<Claim> taken, byte[] token) {
    Map<Claim, CompletableFuture<Optional<CacheValue>>> lockReads = new LinkedHashMap<>();
    taken.forEach(
        claim -> lockReads.put(claim, servers.getOnAsync(claim.server(), claim.lockKey())));
    Map<String, Map<ServerAddress, CacheValue>> read = replicas.getAllOnEach(keys);
    Map<Claim, Long> lockUniques = new LinkedHashMap<>();
    for (Claim claim : taken) {
      CacheValue lock;
      try {
        lock = join(lockReads.get(claim)).orElse(null);
      } catch (IqConnectionException unreachable) {
        lock = null;
      }
      if (lock != null && Arrays.equals(lock.data(), token)) {
        lockUniques.put(claim, lock.cas());
      } else if (!servers.isDown(claim.server())) {
        release(lockUniques);
        releaseUnread(
            taken.stream().filter(other -> !lockUniques.containsKey(other)).toList(), token);
        return new Attempt(null, claim.key() + " (its lock lapsed before it was read)");
      }
    }
    Map<String, Map<ServerAddress, CacheValue>> copies = new HashMap<>();
    keys.forEach(key -> copies.put(key, read.getOrDefault(key, Map.of())));
    return new Attempt(new Holding(copies, lockUniques), null);
  }

  /** Releases locks taken whose unique was not read: read it, and delete the lock only if it still holds the token. */
  private void releaseUnread(List<Claim> taken, byte[] token) {
    Map<Claim, Long> uniques = new LinkedHashMap<>();
    for (Claim claim : taken) {
      try {
        servers
            .getOn(claim.server(), claim.lockKey())
            .filter(lock -> Arrays.equals(lock.data(), token))
            .ifPresent(lock -> uniques.put(claim, lock.cas()));
      } catch (IqException unreachable) {
        // it lapses with its time to live
      }
    }
    release(uniques);
  }

  /** Deletes each lock only if it is unchanged since its unique was read, all in flight at once. */
  private void release(Map<Claim, Long> locks) {
    List<CompletableFuture<Outcome>> sent = new ArrayList<>();
    locks.forEach(
        (claim, unique) -> {
          try {
            sent.add(servers.deleteIfUnchangedOnAsync(claim.server(), claim.lockKey(), unique));
          } catch (IqException unreachable) {
            // it lapses with its time to live
          }
        });
    for (CompletableFuture<Outcome> deleted : sent) {
      try {
        join(deleted);
      } catch (IqException unreachable) {
        // it lapses with its time to live
      }
    }
  }

  /** The locks held, and every replica's copy of the locked values as read under them. */
  private final class Holding implements Locked {
    private final Map<String, Map<ServerAddress, CacheValue>> copies;
    private final Map<Claim, Long> locks;
    private final Map<String, byte[]> values = new HashMap<>();
    private final Map<String, byte[]> staged = new LinkedHashMap<>();
    private boolean released;

    Holding(Map<String, Map<ServerAddress, CacheValue>> copies, Map<Claim, Long> locks) {
      this.copies = copies;
      this.locks = locks;
      // The first replica in the shared order that has a copy: the one every change reaches first.
      copies.forEach(
          (key, byServer) ->
              replicas.serversFor(key).stream()
                  .map(byServer::get)
                  .filter(copy -> copy != null)
                  .findFirst()
                  .ifPresent(copy -> values.put(key, copy.data())));
    }

    @Override
    public Map<String, byte[]> values() {
      return values;
    }

    @Override
    public void stage(String key, byte[] value) {
      if (!copies.containsKey(key)) {
        throw new IllegalArgumentException(key + " is not locked by this holder");
      }
      staged.put(key, value);
    }

    /**
     * Changes each staged key on its replicas one after the other, each conditional on the copy read under the lock.
     *
     * @throws LeaseLostException when the very first change was refused because another holder changed the value
     *     since it was read: nothing changed
     * @throws IqException when a later change was refused, or a live server's outcome is unknown: the changes may be
     *     applied on some replicas and must be taken as not done
     */
    @Override
    public Outcome commit() {
      try {
        if (!conditional) {
          staged.forEach(this::overwrite);
          return Outcome.OK;
        }
        List<String> changed = new ArrayList<>();
        for (Map.Entry<String, byte[]> change : staged.entrySet()) {
          String key = change.getKey();
          for (ServerAddress server : replicas.serversFor(key)) {
            CacheValue before = copies.get(key).get(server);
            Outcome outcome;
            try {
              outcome = change(server, key, before, change.getValue());
            } catch (IqConnectionException unreachable) {
              if (!unreachable.timedOut() && servers.isDown(server)) {
                continue; // its replica went with it
              }
              throw new IqException(
                  "the change of " + key + " on " + server + " has an unknown outcome",
                  unreachable);
            }
            if (outcome == Outcome.OK) {
              if (changed.isEmpty() || !changed.get(changed.size() - 1).equals(key)) {
                changed.add(key);
              }
              continue;
            }
            boolean nothingChanged = changed.isEmpty();
            if (outcome == Outcome.MEMORY_FULL) {
              // Still held: what this holder changed goes back to what it read, so nothing changed.
              changed.forEach(done -> overwrite(done, values.get(done)));
              return outcome;
            }
            if (nothingChanged) {
              throw new LeaseLostException(key + " (changed by another holder: " + outcome + ")");
            }
            throw new IqException(
                "the change of "
                    + key
                    + " on "
                    + server
                    + " was refused ("
                    + outcome
                    + ") after earlier changes went through: another holder changed it, so this"
                    + " holder's lock had lapsed");
          }
        }
        return Outcome.OK;
      } finally {
        close();
      }
    }

    /** One replica's change, conditional on its copy read under the lock ({@code before}, null if it had none). */
    private Outcome change(ServerAddress server, String key, CacheValue before, byte[] value) {
      if (value == null) {
        return before == null
            ? Outcome.OK
            : join(servers.deleteIfUnchangedOnAsync(server, key, before.cas()));
      }
      return before == null
          ? join(servers.addOnAsync(server, key, value, WriteOptions.DEFAULT))
          : join(servers.casOnAsync(server, key, value, before.cas(), WriteOptions.DEFAULT));
    }

    /** Sets or deletes every replica of {@code key} unconditionally ({@code null} deletes). */
    private void overwrite(String key, byte[] value) {
      if (value == null) {
        replicas.delete(key);
      } else {
        Outcome stored = replicas.set(key, value);
        if (!stored.isOk()) {
          throw new IqException("could not write " + key + " back: " + stored);
        }
      }
    }

    @Override
    public void close() {
      if (!released) {
        released = true;
        release(locks);
      }
    }
  }

  /** The reply, its failure unwrapped: a server that could not be reached is an {@link IqConnectionException}. */
  private static <T> T join(CompletableFuture<T> sent) {
    try {
      return sent.join();
    } catch (CompletionException failed) {
      throw failed.getCause() instanceof IqException iq ? iq : failed;
    }
  }

  private static void sleep(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new IqException("interrupted while waiting for a lock", interrupted);
    }
  }
}
