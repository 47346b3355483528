package io.dendrite.iq.server;

import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Named fences, for the owners of ranges (see {@code docs/coordination.md}): a new owner raises a range's fence to
 * its epoch on every server, and every cache change it makes for the range is guarded by that epoch ({@code fenced
 * <name> <epoch>} before the command). A command whose guard names an epoch other than the fence's does not run,
 * so an old owner that wakes up from a pause changes nothing. Each fence has a read-write lock: a guarded command
 * holds it shared while it runs, and raising the fence waits for those, so a command that passed its guard has
 * finished before the fence rises. A server that restarted empty has no fences: every guarded command is refused
 * until the owner raises the fence again.
 */
final class Fences {

  private static final class Fence {
    final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    long epoch;
  }

  /**
   * The largest epoch a fence may be raised to: owners' epochs are ZooKeeper versions plus one (see {@code
   * ZooKeeperOwnership}), and a version is a 32-bit signed number. A fence raised past every epoch an owner can
   * have would shut its range out for as long as the server lives.
   */
  static final long MAX_EPOCH = 1L << 31;

  private final Map<String, Fence> fences = new ConcurrentHashMap<>();

  /** A guard a command runs under: the fence it names and the epoch it was let through at. */
  record Guard(String name, long epoch) {}

  /** The guard of the command this thread is running, if it runs guarded; leases it grants remember it. */
  private static final ThreadLocal<Guard> RUNNING_UNDER = new ThreadLocal<>();

  /** The guard the current thread's command runs under, or null. */
  static Guard current() {
    return RUNNING_UNDER.get();
  }

  /**
   * Raises {@code name}'s fence to {@code epoch} (never lowers it), once the guarded commands running under it are
   * done; a new fence is charged to {@code client} (fences last as long as the server). Returns the epoch now.
   */
  long raise(String name, long epoch, Client client) {
    Fence fence =
        fences.computeIfAbsent(
            name,
            n -> {
              client.charge().add(HeldBytes.RECORD_OVERHEAD + n.length());
              return new Fence();
            });
    fence.lock.writeLock().lock();
    try {
      fence.epoch = Math.max(fence.epoch, epoch);
      return fence.epoch;
    } finally {
      fence.lock.writeLock().unlock();
    }
  }

  /**
   * Runs {@code command} if {@code name}'s fence stands at {@code epoch}, holding the fence shared meanwhile.
   *
   * @return empty when it ran; otherwise the fence's epoch ({@code 0} when there is none)
   */
  OptionalLong runGuarded(String name, long epoch, Runnable command) {
    Fence fence = fences.get(name);
    if (fence == null) {
      return OptionalLong.of(0);
    }
    fence.lock.readLock().lock();
    try {
      if (fence.epoch != epoch) {
        return OptionalLong.of(fence.epoch);
      }
      RUNNING_UNDER.set(new Guard(name, epoch));
      try {
        command.run();
      } finally {
        RUNNING_UNDER.remove();
      }
      return OptionalLong.empty();
    } finally {
      fence.lock.readLock().unlock();
    }
  }

  int size() {
    return fences.size();
  }
}
