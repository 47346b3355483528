package io.dendrite.iq.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Exclusive access to values kept pinned on R servers each, and changes to them that take effect together: the
 * Q-refresh lease of every key on every one of its replica servers, taken in one transaction, with new values staged
 * under those leases and applied by one {@code commit} per server. Made by {@link ReplicatedStore#lock}.
 *
 * <p>Why the leases live on the replicas themselves, and not on a lock key of their own: the servers then fence
 * every change. A holder whose lease expired (a long pause) or was lost with its server cannot change a replica any
 * more, because staging needs the lease and the commit applies only what the tid still holds there; and because a
 * taker needs the lease of <em>every</em> replica whose server is not down, two holders always meet on some
 * surviving server and cannot both hold a value. A server that does not answer in time is not down (it may be
 * stalled, still holding a lease and a replica): taking the leases waits for it, and a change it may or may not have
 * applied is reported as not done, never as done.
 *
 * <p>Reads: the value of a key is the first pinned one found in {@link ReplicaPlacement#serversFor} order among its
 * granted replicas (an unpinned one is not this class's: {@link #unpinned()}). Replicas differ only after a change
 * that was not reported done (or on a server that restarted empty), and every commit writes the value to all of them
 * again. Not thread-safe; close it when done.
 */
public final class ReplicatedTransaction implements AutoCloseable {
  private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final IqClient client;
  private final Transaction transaction;
  private final Map<String, List<RefreshLease>> leases;
  private final Map<String, byte[]> values;
  private final Map<String, byte[]> staged = new LinkedHashMap<>();
  private final Set<String> unpinned = new LinkedHashSet<>();
  private boolean ended;

  private ReplicatedTransaction(
      IqClient client, Transaction transaction, Map<String, List<RefreshLease>> leases) {
    this.client = client;
    this.transaction = transaction;
    this.leases = leases;
    this.values = new HashMap<>();
    leases.forEach(
        (key, granted) -> {
          List<CacheValue> found =
              granted.stream().map(RefreshLease::current).flatMap(Optional::stream).toList();
          found.stream()
              .filter(CacheValue::pinned)
              .findFirst()
              .ifPresent(value -> values.put(key, value.data()));
          if (found.stream().anyMatch(value -> !value.pinned())) {
            unpinned.add(key);
          }
        });
  }

  static ReplicatedTransaction lock(
      IqClient client, Collection<String> keys, int replicas, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = FIRST_PAUSE_NANOS;
    List<String> distinct = keys.stream().distinct().toList();
    while (true) {
      Transaction transaction = client.beginTransaction();
      Map<String, Map<ServerAddress, CompletableFuture<RefreshResult>>> asked =
          new LinkedHashMap<>();
      for (String key : distinct) {
        Map<ServerAddress, CompletableFuture<RefreshResult>> replies = new LinkedHashMap<>();
        client
            .replicaPlacement()
            .serversFor(key, replicas)
            .forEach(server -> replies.put(server, transaction.readForUpdateOnce(key, server)));
        asked.put(key, replies);
      }
      Map<String, List<RefreshLease>> granted = new LinkedHashMap<>();
      String waitingFor = null;
      for (Map.Entry<String, Map<ServerAddress, CompletableFuture<RefreshResult>>> key :
          asked.entrySet()) {
        List<RefreshLease> leases = new ArrayList<>();
        for (Map.Entry<ServerAddress, CompletableFuture<RefreshResult>> reply :
            key.getValue().entrySet()) {
          try {
            RefreshResult result = ServerConnection.await(reply.getValue());
            if (result instanceof RefreshResult.Granted lease) {
              leases.add(lease.lease());
            } else {
              waitingFor = key.getKey() + " (held by another)";
            }
          } catch (IqConnectionException failed) {
            if (failed.timedOut()) {
              waitingFor =
                  key.getKey()
                      + " (a replica's server does not answer: "
                      + failed.getMessage()
                      + ")";
            } else if (!client.servers().isDown(reply.getKey())) {
              // A connection left over from before the server restarted failed; a fresh one
              // answers. Taking the server for down would leave its (empty) replica out of every
              // change.
              waitingFor = key.getKey() + " (the connection to " + reply.getKey() + " dropped)";
            }
            // Otherwise the server is down: its replica and any lease on it are gone.
          }
        }
        // A key whose every server is down is locked with no lease: it has no value (it was lost
        // with its servers), and staging a value for it fails at commit.
        granted.put(key.getKey(), leases);
      }
      if (waitingFor == null) {
        return new ReplicatedTransaction(client, transaction, granted);
      }
      release(transaction);
      if (System.nanoTime() + pause > deadline) {
        throw new IqException("could not lock " + waitingFor + " within " + timeout);
      }
      sleep(ThreadLocalRandom.current().nextLong(pause / 2, pause + 1));
      pause = Math.min(LONGEST_PAUSE_NANOS, pause * 2);
    }
  }

  /** The values of the locked keys that have one (see the class comment on which replica's). */
  public Map<String, byte[]> values() {
    return values;
  }

  /**
   * The locked keys where some replica held a value that is not pinned ({@link CacheValue#pinned()}). Every value
   * this class writes is pinned, so such a value was put there by someone else (with {@code --pin-users}, a user who
   * may not pin): it is left out of {@link #values()}, and the commit replaces it like any other replica.
   */
  public Set<String> unpinned() {
    return unpinned;
  }

  /** Stages {@code value} (pinned) for {@code key}, which must be locked; {@code null} stages a delete. */
  public void stage(String key, byte[] value) {
    if (!leases.containsKey(key)) {
      throw new IllegalArgumentException(key + " is not locked by this transaction");
    }
    staged.put(key, value);
  }

  /**
   * Applies the staged changes on every replica and releases the leases. Locked keys without a staged change keep
   * the value {@link #values()} gave them, written again to all their replicas.
   *
   * @return {@link Outcome#OK} when every replica whose server is not down applied them; {@link
   *     Outcome#PINNED_MEMORY_FULL} when a server refused to pin a staged value, or {@link Outcome#INVALID} when a
   *     lease was lost (expired, or its server restarted) before the commit, or the transaction lapsed on every
   *     server between its swaps and its commit: nothing was applied then
   * @throws IqConnectionException when a value is staged for a key whose every server is down
   * @throws PartlyCommittedException when the transaction lapsed on some servers before the commit and was applied
   *     on the others
   * @throws IqException when a live server's outcome is unknown (it did not answer, or refused at commit): the
   *     changes may be applied on some replicas and not on others, so they must be taken as not done
   */
  public Outcome commit() {
    ensureOpen();
    for (Map.Entry<String, byte[]> change : staged.entrySet()) {
      if (change.getValue() != null && leases.get(change.getKey()).isEmpty()) {
        close();
        throw new IqConnectionException(
            "every server holding " + change.getKey() + " is down", null);
      }
    }
    Map<RefreshLease, CompletableFuture<Outcome>> swaps = new LinkedHashMap<>();
    leases.forEach(
        (key, granted) -> {
          byte[] value = staged.containsKey(key) ? staged.get(key) : values.get(key);
          byte[] body = value == null ? new byte[0] : value;
          granted.forEach(lease -> swaps.put(lease, lease.swapAsync(body, WriteOptions.PINNED)));
        });
    Outcome worstSwap = Outcome.OK;
    for (Map.Entry<RefreshLease, CompletableFuture<Outcome>> swap : swaps.entrySet()) {
      worstSwap = worstSwap.worst(swapOutcome(swap.getKey(), swap.getValue()));
    }
    if (worstSwap == Outcome.PINNED_MEMORY_FULL || worstSwap == Outcome.INVALID) {
      close();
      return worstSwap;
    }
    if (worstSwap != Outcome.OK) {
      close();
      throw new IqException("could not stage the changes of " + leases.keySet() + ": " + worstSwap);
    }
    ended = true;
    Map<ServerAddress, Outcome> outcomes = transaction.commitOnEach(false);
    boolean appliedSomewhere = false;
    List<ServerAddress> lapsed = new ArrayList<>();
    for (Map.Entry<ServerAddress, Outcome> answered : outcomes.entrySet()) {
      ServerAddress server = answered.getKey();
      Outcome outcome = answered.getValue();
      if (outcome == Outcome.OK) {
        appliedSomewhere = true;
      } else if (outcome == Outcome.EXPIRED) {
        // The server no longer knew the transaction (its record lapsed with the leases between the
        // swaps and the commit): it applied nothing.
        lapsed.add(server);
      } else if (!(outcome == Outcome.STATE_LOST && client.servers().isDown(server))) {
        throw new IqException(
            "commit of "
                + leases.keySet()
                + " on "
                + server
                + " answered "
                + outcome
                + ": it may or may not be applied there");
      }
    }
    if (!lapsed.isEmpty()) {
      if (appliedSomewhere) {
        throw new PartlyCommittedException(
            "commit of "
                + leases.keySet()
                + " was applied on some replicas and lapsed on "
                + lapsed
                + ": the replicas differ until the next commit",
            lapsed);
      }
      return Outcome
          .INVALID; // lapsed everywhere: nothing was applied, as when a swap finds its lease gone
    }
    return Outcome.OK;
  }

  /** Releases the leases without changing anything, unless already committed. */
  @Override
  public void close() {
    if (!ended) {
      ended = true;
      release(transaction);
    }
  }

  /**
   * A swap's outcome, where a server that is down counts as done: the lease and the replica went with it, and the
   * other replicas decide. One that did not answer in time, or whose connection dropped while it stays up, leaves
   * the outcome unknown.
   */
  private Outcome swapOutcome(RefreshLease lease, CompletableFuture<Outcome> swap) {
    Outcome outcome;
    try {
      outcome = swap.join();
    } catch (CompletionException failed) {
      outcome = Outcome.STATE_LOST;
    }
    return outcome == Outcome.STATE_LOST && client.servers().isDown(lease.server())
        ? Outcome.OK
        : outcome;
  }

  private void ensureOpen() {
    if (ended) {
      throw new IllegalStateException("transaction already ended");
    }
  }

  private static void release(Transaction transaction) {
    try {
      transaction.release();
    } catch (IqException unreachable) {
      // A lease on a server that cannot be reached ends with that server or expires on its own.
    }
  }

  private static void sleep(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new IqException("interrupted while waiting for a lease", interrupted);
    }
  }
}
