package io.dendrite.iq.server;

import java.util.Collection;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Lock striping by key: the concurrency model of the whole server.
 *
 * <p>Netty event-loop threads call into the store concurrently. Every operation on one key holds
 * that key's stripe for its whole read-modify-write (item, lease and staged value together), so
 * the per-key state machine of the I/Q and C/O leases is linearizable. Operations over many keys
 * ({@code commit}, {@code dar}, {@code release}, {@code dcommit}, {@code dabort}, ...) take all
 * their stripes at once in ascending stripe order, and a thread holding a single stripe never asks
 * for another, so no cycle of waits can form: the scheme is deadlock-free. Aborting another
 * session does not touch that session's keys; it only flips the session's state, and its leases
 * are treated as gone wherever they are next looked at, so no extra stripe is needed there.
 */
final class KeyLocks {

  private static final int STRIPES = 1024;

  private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];

  KeyLocks() {
    for (int i = 0; i < STRIPES; i++) {
      stripes[i] = new ReentrantLock();
    }
  }

  /** Locks one key's stripe. */
  Held lock(String key) {
    ReentrantLock lock = stripes[stripeOf(key)];
    lock.lock();
    return lock::unlock;
  }

  /** Locks the stripes of all {@code keys}, in ascending stripe order. */
  Held lockAll(Collection<String> keys) {
    int[] order = keys.stream().mapToInt(KeyLocks::stripeOf).distinct().sorted().toArray();
    for (int stripe : order) {
      stripes[stripe].lock();
    }
    return () -> {
      for (int i = order.length - 1; i >= 0; i--) {
        stripes[order[i]].unlock();
      }
    };
  }

  private static int stripeOf(String key) {
    int h = key.hashCode();
    return (h ^ (h >>> 16)) & (STRIPES - 1);
  }

  /** A held set of stripes; closing releases them. */
  interface Held extends AutoCloseable {
    @Override
    void close();
  }
}
