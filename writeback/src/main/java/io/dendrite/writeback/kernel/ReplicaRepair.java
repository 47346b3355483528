package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.HandoverParty;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ReplicaPlacement;
import io.dendrite.iq.client.ServerAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives values pinned on R servers their R copies back after a server is lost. A background thread looks at the
 * servers every {@code interval} ({@link ServerRuns}) and, whenever a server is back or replica placement changed, it
 * runs every restore step (the engine's buffered writes and listings, and whatever else registered, such as range
 * write-back's log), and runs them again at each next look until a whole pass succeeds and finds nothing left to
 * restore. Without this, a buffered write keeps one copy fewer until it is written again or drained, and a rolling
 * restart of the cache tier, one server after another, loses it.
 *
 * <p>Where the copies go ({@link ReplicaPlacement#serversFor}):
 *
 * <ul>
 *   <li>A server that restarts (answers as a new run) gets its copies back on its address.
 *   <li>A server that stays down for {@code replaceAfter} is taken out of replica placement: the next server
 *       clockwise substitutes for it, gets a copy of every value, and a second loss is survived too. Once it is back
 *       as a new run it is put back in, gets its copies back, and the substitutes' copies are deleted later ({@link
 *       ReplicaPlacement#deleteStrays}).
 *   <li>A server that says it is leaving (its process was told to stop and hands over first, {@code stats
 *       leaving 1}) is taken out of placement at once, so that its copies are made on the next servers before it
 *       stops; it refuses new leases on what it holds meanwhile. The servers are asked whether one is leaving every
 *       {@link #WATCH} (or {@code interval}, if shorter) between looks, and a leaving one is looked at that often.
 *       Once a whole pass after it was taken out found nothing left to restore, the server is told so ({@code
 *       pmoved}): it stops as soon as every client that stored pinned values on it has said so, rather than at
 *       the end of its handover deadline. When a server answers on its address again as a new
 *       run, it is put back in as after a restart.
 *   <li>A server that was down and answers again as the <em>same</em> run was cut off, not restarted: it kept copies
 *       that may have missed changes made while it was taken for down, and reading one would bring an older buffered
 *       write back. It is taken out of placement at once and stays out until it restarts.
 * </ul>
 */
public final class ReplicaRepair implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ReplicaRepair.class);

  /** How often, at most, the servers are asked whether one is leaving, and a leaving one is looked at. */
  static final Duration WATCH = Duration.ofMillis(200);

  private final ReplicaPlacement placement;
  private final ServerRuns runs;
  private final Duration replaceAfter;
  private final List<IntSupplier> steps = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService thread;
  private final HandoverParty handovers;
  private final long intervalNanos;
  private boolean due;
  private long placementSeen;

  /** When the last look began ({@link System#nanoTime()}); 0: none yet. */
  private long lastLookNanos;

  /** Leaving servers told that this client's copies are made ({@code pmoved}), so that it is logged once. */
  private final Set<ServerAddress> toldMoved = new HashSet<>();

  /**
   * Starts looking every {@code interval}; {@link Duration#ZERO} never looks (restores only on {@link #restoreNow}).
   * A server down for {@code replaceAfter} is replaced by the next one in placement.
   */
  public ReplicaRepair(IqClient cache, Duration interval, Duration replaceAfter, String name) {
    this.placement = cache.replicaPlacement();
    this.runs = new ServerRuns(cache);
    this.replaceAfter = replaceAfter;
    this.placementSeen = placement.version();
    this.handovers = placement.joinHandovers();
    this.intervalNanos = interval.toNanos();
    this.thread =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread daemon = new Thread(task, name);
              daemon.setDaemon(true);
              return daemon;
            });
    if (!interval.isZero()) {
      thread.execute(this::tick);
    }
  }

  /**
   * Looks every {@code interval}; in between, at most {@link #WATCH} apart, asks the servers whether one is leaving
   * and looks at once if so; and looks every tick while a server is leaving, to copy and confirm as soon as it can.
   */
  private void tick() {
    try {
      long now = System.nanoTime();
      if (lastLookNanos == 0
          || now - lastLookNanos >= intervalNanos
          || !runs.leaving().isEmpty()
          || runs.newlyLeaving()) {
        lastLookNanos = now;
        look();
      }
    } catch (RuntimeException failed) {
      log.warn("looking at the cache servers failed; looking again at the next tick", failed);
    } finally {
      try {
        thread.schedule(this::tick, Math.min(intervalNanos, WATCH.toNanos()), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.RejectedExecutionException closed) {
        // closed
      }
    }
  }

  /** Adds a restore step, run on every repair pass; it returns how many copies it restored. */
  public void register(IntSupplier step) {
    steps.add(step);
  }

  /** Removes a step {@link #register}ed before. */
  public void unregister(IntSupplier step) {
    steps.remove(step);
  }

  /** Runs every restore step now, in the calling thread. */
  public int restoreNow() {
    int restored = 0;
    for (IntSupplier step : steps) {
      restored += step.getAsInt();
    }
    return restored;
  }

  private void look() {
    try {
      for (ServerRuns.Back back : runs.backSinceLastLook()) {
        if (back.sameRun()) {
          if (placement.exclude(back.server())) {
            log.warn(
                "cache server {} answers again as the run it was before it was taken for down: it was cut off, "
                    + "and its copies of pinned values may be older than the others; it stays out of replica placement "
                    + "until it restarts",
                back.server());
          }
          continue;
        }
        if (placement.include(back.server())) {
          log.info("cache server {} is back as a new run: replicas move back to it", back.server());
        }
        log.debug("cache server {} is back (or first seen); restoring replicas", back.server());
        due = true;
      }
      for (ServerAddress server : runs.leaving()) {
        if (placement.exclude(server)) {
          log.warn(
              "cache server {} is leaving (stopping after a handover): the next servers take its replicas",
              server);
        }
      }
      runs.down()
          .forEach(
              (server, downFor) -> {
                if (downFor.compareTo(replaceAfter) >= 0 && placement.exclude(server)) {
                  log.warn(
                      "cache server {} has been down for {}: the next servers take its replicas",
                      server,
                      downFor);
                }
              });
      long version = placement.version();
      if (version != placementSeen) {
        placementSeen = version;
        due = true;
      }
      if (due) {
        int restored = restoreNow();
        // Done once a pass finds nothing to restore: a pass that took a live server for down (a
        // connection left from before its restart failed) is made good by the next.
        due = restored > 0;
        if (restored > 0) {
          log.info(
              "restored {} replicas of pinned values after cache servers came back or were replaced",
              restored);
        }
      }
      confirmHandovers();
      int strays = placement.deleteStrays();
      if (strays > 0) {
        log.info(
            "deleted {} copies that substitute cache servers held while a server was out", strays);
      }
    } catch (RuntimeException failed) {
      log.warn("restoring replicas failed; retrying at the next look", failed);
    }
  }

  /**
   * Tells each leaving server that is out of this client's placement that this engine's copies of what it held are
   * made, once a whole restore pass since it was taken out found nothing left to restore ({@code pmoved}, through
   * {@link HandoverParty}); takes that back while a pass is due. Said again at every look while it is
   * leaving, so that a server that saw a pinned write since hears it again.
   */
  private void confirmHandovers() {
    if (due) {
      handovers.notMoved();
      return;
    }
    Set<ServerAddress> excluded = placement.excluded();
    for (ServerAddress server : runs.leaving()) {
      if (!excluded.contains(server)) {
        continue;
      }
      try {
        if (handovers.moved(server) && toldMoved.add(server)) {
          log.info(
              "told leaving cache server {} that the copies of its pinned values are made on the next servers",
              server);
        }
      } catch (RuntimeException unanswered) {
        log.debug(
            "could not tell leaving cache server {} that its copies are made", server, unanswered);
      }
    }
    toldMoved.retainAll(runs.leaving());
  }

  @Override
  public void close() {
    handovers.close();
    thread.shutdownNow();
    try {
      thread.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
