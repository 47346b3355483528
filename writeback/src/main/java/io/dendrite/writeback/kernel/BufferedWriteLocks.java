package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReplicatedStore;
import io.dendrite.iq.client.ReplicatedTransaction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Exclusive access to buffered writes, and to session queues, session objects and their mappings (values pinned on
 * R servers) for everyone who changes them: writers, committers, drain threads, read misses and the write-through
 * fallback. A holder reads the values, stages changes and commits them.
 *
 * <ul>
 *   <li>{@link #replicaLeases}: the Q lease of each buffered write on each of its replica servers ({@link
 *       ReplicatedTransaction}), so processes exclude each other and the servers fence the commit: a holder that
 *       lost its lease (expired, or lost with its server) cannot change a replica, and two holders cannot exist while
 *       some replica's server is up. A stalled server makes takers wait, it is never taken for lost.
 *   <li>{@link #inProcess}: striped {@link ReentrantLock}s and plain pinned writes, for an engine that is the only
 *       one writing or draining its documents (range write-back, whose coordinator gives a range to one process at a
 *       time). A crashed process takes its locks with it, and its successor starts with none held.
 * </ul>
 *
 * <p>A commit ends what the holder may do under those locks for the lease kind: take them again to go on.
 */
public interface BufferedWriteLocks {

  /** Locks {@code keys} (all or none, in an order every caller shares) and reads their values. */
  Locked lock(List<String> keys);

  /**
   * {@link #lock}, with the reads of the values in flight when it returns, so that a caller can send other requests
   * alongside; {@link PinnedReplicas.Sent#await} gives the holding once they are in. The keys are locked already
   * (for {@link #inProcess}); other locks lock and read before returning.
   */
  default PinnedReplicas.Sent<Locked> lockAsync(List<String> keys) {
    Locked locked = lock(keys);
    return () -> locked;
  }

  /** Whether these locks exclude this process's threads only: no other process writes these values. */
  default boolean inProcessOnly() {
    return false;
  }

  /** Buffered writes held together. */
  public interface Locked extends AutoCloseable {

    /** The values of the locked keys that have one. */
    Map<String, byte[]> values();

    /** Stages {@code value} for a locked key; {@code null} stages its deletion. */
    void stage(String key, byte[] value);

    /**
     * The holder is about to change a locked key's value itself, outside {@link #commit}: until {@link
     * #changeConfirmed}, what its replicas hold is unknown.
     */
    default void changing(String key) {}

    /** Every replica confirmed the change the holder announced with {@link #changing}: {@code key} holds {@code value}. */
    default void changeConfirmed(String key, byte[] value) {}

    /**
     * Applies the staged changes on every replica and ends this holding.
     *
     * @return {@link Outcome#OK}, or {@link Outcome#PINNED_MEMORY_FULL} when pinned memory refused a value
     *     (nothing changed)
     * @throws LeaseLostException when a lease was lost before anything changed
     * @throws io.dendrite.iq.client.IqException when some replica's outcome is unknown: the changes must be taken as
     *     not done, and may be applied on some replicas
     */
    Outcome commit();

    /** Releases what is still held; staged changes that were not committed are dropped. */
    @Override
    void close();
  }

  /**
   * Locks that exclude every process using the same cache servers; see the class comment. A value that is not
   * pinned is not one of {@code replicas} ({@link PinnedReplicas#refuseUnpinned}).
   */
  public static BufferedWriteLocks replicaLeases(PinnedReplicas replicas, Duration timeout) {
    ReplicatedStore store = replicas.cache().replicaPlacement().store(replicas.count());
    PinnedReplicas pinned = replicas;
    return keys -> {
      ReplicatedTransaction transaction = store.lock(keys, timeout);
      Map<String, byte[]> values;
      Map<String, byte[]> former;
      try {
        transaction.unpinned().forEach(replicas::refuseUnpinned);
        values = new HashMap<>(transaction.values());
        former = formerCopiesOfMissing(pinned, keys, values);
      } catch (RuntimeException failed) {
        transaction.close();
        throw failed;
      }
      Set<String> staged = new HashSet<>();
      return new Locked() {
        @Override
        public Map<String, byte[]> values() {
          return values;
        }

        @Override
        public void stage(String key, byte[] value) {
          transaction.stage(key, value);
          staged.add(key);
        }

        @Override
        public Outcome commit() {
          Outcome outcome = transaction.commit();
          if (outcome == Outcome.INVALID) {
            throw new LeaseLostException(String.join(",", keys));
          }
          if (outcome.isOk()) {
            deleteFormerCopiesOfStaged(pinned, former, staged);
          }
          return outcome;
        }

        @Override
        public void close() {
          transaction.close();
        }
      };
    };
  }

  /**
   * Locks that exclude the threads of this process only, {@code stripes} of them shared by hash. Being the only
   * writer, this process remembers the values it confirmed ({@code known}), and reads only the others. {@code
   * mayLock} runs before every locking and throws when this process may no longer count itself the only writer
   * ({@link EngineClaim#check}).
   */
  public static BufferedWriteLocks inProcess(
      PinnedReplicas replicas, int stripes, KnownValues known, Runnable mayLock) {
    ReentrantLock[] locks = new ReentrantLock[stripes];
    for (int i = 0; i < stripes; i++) {
      locks[i] = new ReentrantLock();
    }
    return new BufferedWriteLocks() {
      @Override
      public Locked lock(List<String> keys) {
        return lockAsync(keys).await();
      }

      @Override
      public boolean inProcessOnly() {
        return true;
      }

      @Override
      public PinnedReplicas.Sent<Locked> lockAsync(List<String> keys) {
        mayLock.run();
        // What this process confirmed under an earlier placement says nothing of a key's copies on
        // the
        // servers it has now (a key's own servers taken out: its copies are only on them).
        known.placement(replicas.cache().replicaPlacement().version());
        TreeSet<Integer> indexes = new TreeSet<>();
        keys.forEach(key -> indexes.add(Math.floorMod(key.hashCode(), stripes)));
        List<ReentrantLock> held = new ArrayList<>(indexes.size());
        for (int index : indexes) {
          locks[index].lock();
          held.add(locks[index]);
        }
        Map<String, byte[]> values = new HashMap<>();
        List<String> unknown = new ArrayList<>();
        for (String key : keys) {
          known
              .get(key)
              .ifPresentOrElse(
                  value -> value.ifPresent(bytes -> values.put(key, bytes)),
                  () -> unknown.add(key));
        }
        if (unknown.isEmpty()) {
          Locked locked = holding(replicas, held, values, Map.of(), known);
          return () -> locked;
        }
        PinnedReplicas.Sent<Map<String, byte[]>> reading;
        try {
          reading = replicas.getAllAsync(unknown);
        } catch (RuntimeException failed) {
          held.forEach(ReentrantLock::unlock);
          throw failed;
        }
        return () -> {
          Map<String, byte[]> former;
          try {
            values.putAll(reading.await());
            former = formerCopiesOfMissing(replicas, unknown, values);
          } catch (RuntimeException failed) {
            held.forEach(ReentrantLock::unlock);
            throw failed;
          }
          return holding(replicas, held, values, former, known);
        };
      }
    };
  }

  /**
   * Adds to {@code values} the copies that former servers hold of those of {@code keys} it lacks ({@link
   * PinnedReplicas#formerCopies}); returns them.
   */
  private static Map<String, byte[]> formerCopiesOfMissing(
      PinnedReplicas replicas, Collection<String> keys, Map<String, byte[]> values) {
    List<String> missing = keys.stream().filter(key -> !values.containsKey(key)).toList();
    if (missing.isEmpty()) {
      return Map.of();
    }
    Map<String, byte[]> former = replicas.formerCopies(missing);
    values.putAll(former);
    return former;
  }

  /**
   * Once a holder's change of a key whose value came from former servers is on every replica (or the key is drained),
   * deletes those copies: read again later, they would bring the value back.
   */
  private static void deleteFormerCopiesOfStaged(
      PinnedReplicas replicas, Map<String, byte[]> former, Collection<String> changed) {
    List<String> done = changed.stream().filter(former::containsKey).toList();
    if (!done.isEmpty()) {
      replicas.deleteFormerCopies(done);
    }
  }

  /** What {@link #inProcess} holds: the stripes' locks, and the values read under them. */
  private static Locked holding(
      PinnedReplicas replicas,
      List<ReentrantLock> held,
      Map<String, byte[]> values,
      Map<String, byte[]> former,
      KnownValues known) {
    Map<String, byte[]> staged = new LinkedHashMap<>();
    return new Locked() {
      private boolean released;

      @Override
      public Map<String, byte[]> values() {
        return values;
      }

      @Override
      public void stage(String key, byte[] value) {
        staged.put(key, value);
      }

      @Override
      public void changing(String key) {
        known.forget(key);
      }

      @Override
      public void changeConfirmed(String key, byte[] value) {
        known.confirm(key, value);
        deleteFormerCopiesOfStaged(replicas, former, List.of(key));
      }

      @Override
      public Outcome commit() {
        try {
          List<String> deleted = new ArrayList<>();
          for (Map.Entry<String, byte[]> change : staged.entrySet()) {
            known.forget(change.getKey());
            if (change.getValue() == null) {
              deleted.add(change.getKey());
              continue;
            }
            Outcome stored = replicas.set(change.getKey(), change.getValue());
            if (!stored.isOk()) {
              // Some replicas may hold the new value: put the one this holder read back, so nothing
              // changed.
              byte[] before = values.get(change.getKey());
              if (before == null) {
                replicas.delete(change.getKey());
              } else {
                replicas.set(change.getKey(), before);
              }
              return stored;
            }
            known.confirm(change.getKey(), change.getValue());
          }
          replicas.deleteAll(deleted);
          deleted.forEach(key -> known.confirm(key, null));
          deleteFormerCopiesOfStaged(replicas, former, staged.keySet());
          return Outcome.OK;
        } finally {
          close();
        }
      }

      @Override
      public void close() {
        if (!released) {
          released = true;
          held.forEach(ReentrantLock::unlock);
        }
      }
    };
  }
}
