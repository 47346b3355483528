package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives values pinned on R servers their R copies back after a server restarts empty. A background thread looks
 * at the servers every {@code interval} ({@link ServerRuns}); once one is back it runs every restore step (the
 * engine's buffered writes and listings, and whatever else registered, such as range write-back's log), and runs
 * them again at each next look until a whole pass succeeds and finds nothing left to restore. Without this, a buffered write keeps one copy fewer
 * until it is written again or drained, and a rolling restart of the cache tier, one server after another, loses it.
 *
 * <p>Placement is fixed by the ring, so a copy is restored on the server that lost it, once that server (or a
 * replacement at its address) answers again; a server that stays down is not replaced by another.
 */
final class ReplicaRepair implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ReplicaRepair.class);

  private final ServerRuns runs;
  private final List<IntSupplier> steps = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService thread;
  private boolean due;

  /** Starts looking every {@code interval}; {@link Duration#ZERO} never looks (restores only on {@link #restoreNow}). */
  ReplicaRepair(IqClient cache, Duration interval, String name) {
    this.runs = new ServerRuns(cache);
    this.thread = Executors.newSingleThreadScheduledExecutor(task -> {
      Thread daemon = new Thread(task, name);
      daemon.setDaemon(true);
      return daemon;
    });
    if (!interval.isZero()) {
      thread.scheduleWithFixedDelay(this::look, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  /** Adds a restore step, run on every repair pass; it returns how many copies it restored. */
  void register(IntSupplier step) {
    steps.add(step);
  }

  /** Removes a step {@link #register}ed before. */
  void unregister(IntSupplier step) {
    steps.remove(step);
  }

  /** Runs every restore step now, in the calling thread. */
  int restoreNow() {
    int restored = 0;
    for (IntSupplier step : steps) {
      restored += step.getAsInt();
    }
    return restored;
  }

  private void look() {
    try {
      List<ServerAddress> back = runs.backSinceLastLook();
      if (!back.isEmpty()) {
        log.debug("cache servers {} are back (or first seen); restoring replicas", back);
        due = true;
      }
      if (due) {
        int restored = restoreNow();
        // Done once a pass finds nothing to restore: a pass that took a live server for down (a connection left
        // from before its restart failed) is made good by the next.
        due = restored > 0;
        if (restored > 0) {
          log.info("restored {} replicas of pinned values after cache servers came back", restored);
        }
      }
    } catch (RuntimeException failed) {
      log.warn("restoring replicas failed; retrying at the next look", failed);
    }
  }

  @Override
  public void close() {
    thread.shutdownNow();
    try {
      thread.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
