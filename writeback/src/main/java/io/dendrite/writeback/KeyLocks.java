package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Mutual exclusion around everything that changes one replicated value of the Design 1 engine (a buffered write,
 * a pending-writes partition): writers, drain threads and read misses.
 *
 * <ul>
 *   <li>{@link #cacheLeases}: an {@link ExclusiveLease} per name, held in the cache tier, so processes exclude each
 *       other. Each take and release is a round trip, and a holder checks its lease before every destructive step.
 *   <li>{@link #inProcess}: striped {@link ReentrantLock}s, for an engine that is the only one writing or draining
 *       its documents (range write-back, whose coordinator gives a range to one process at a time). No round
 *       trips; a crashed process takes its locks with it, and its successor starts with none held.
 * </ul>
 *
 * <p>Callers that hold several locks take them in one {@link #acquireAll} (which orders them), and take document
 * locks before partition locks, so no two callers wait for each other.
 */
interface KeyLocks {

  /** Takes the lock named {@code name}, waiting while another holder keeps it. */
  default Held acquire(String name) {
    return acquireAll(List.of(name));
  }

  /** Takes the lock of every name, in an order every caller shares; all or, on a failure, none. */
  Held acquireAll(Collection<String> names);

  /** Locks held together; {@link #close()} releases them all. */
  interface Held extends AutoCloseable {

    /** Whether the lock of {@code name} is still held: a cache lease can expire or be voided, a local lock cannot. */
    boolean stillHeld(String name);

    /** @throws ExclusiveLease.LeaseLostException unless every lock is still held; nothing was changed then */
    void ensureHeld();

    @Override
    void close();
  }

  /** Locks that exclude every process using the same cache servers. */
  static KeyLocks cacheLeases(IqClient cache) {
    return names -> {
      Map<String, ExclusiveLease> leases = new LinkedHashMap<>();
      try {
        for (String name : new TreeSet<>(names)) {
          leases.put(name, ExclusiveLease.acquire(cache, name));
        }
      } catch (RuntimeException failed) {
        leases.values().forEach(ExclusiveLease::close);
        throw failed;
      }
      return new Held() {
        @Override
        public boolean stillHeld(String name) {
          return leases.get(name).stillHeld();
        }

        @Override
        public void ensureHeld() {
          leases.values().forEach(ExclusiveLease::ensureHeld);
        }

        @Override
        public void close() {
          leases.values().forEach(ExclusiveLease::close);
        }
      };
    };
  }

  /** Locks that exclude the threads of this process only, {@code stripes} of them shared by hash. */
  static KeyLocks inProcess(int stripes) {
    ReentrantLock[] locks = new ReentrantLock[stripes];
    for (int i = 0; i < stripes; i++) {
      locks[i] = new ReentrantLock();
    }
    return names -> {
      TreeSet<Integer> indexes = new TreeSet<>();
      names.forEach(name -> indexes.add(Math.floorMod(name.hashCode(), stripes)));
      List<ReentrantLock> held = new ArrayList<>(indexes.size());
      for (int index : indexes) {
        locks[index].lock();
        held.add(locks[index]);
      }
      return new Held() {
        @Override
        public boolean stillHeld(String name) {
          return true;
        }

        @Override
        public void ensureHeld() {}

        @Override
        public void close() {
          held.forEach(ReentrantLock::unlock);
        }
      };
    };
  }
}
