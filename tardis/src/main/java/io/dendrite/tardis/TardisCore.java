package io.dendrite.tardis;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.FenceToken;
import io.dendrite.core.OwnedRange;
import io.dendrite.core.StoreFencedOutException;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.engine.BufferRefusedException;
import io.dendrite.writeback.engine.EngineSettings;
import io.dendrite.writeback.kernel.DrainThreads;
import io.dendrite.writeback.kernel.PendingWritesPartition;
import io.dendrite.writeback.kernel.ReplicaRepair;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.OwnerStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * What every TARDIS front end shares: the process's {@link Mode}, the {@link Technique}'s decision for each write and
 * miss, the writes buffered in the cache tier, the active recovery workers, the replica repair, and the counts.
 * {@link Tardis} serves documents through it and {@link TardisDendrite} a range's result sets; each names what a
 * write or miss acts on with a {@link Subject}, and buffers a write its own way (per document, or per document with
 * the write's interval indexed).
 */
final class TardisCore implements AutoCloseable {
  /** What a write or a miss acts on: one document, or the interval of a range write or get. */
  interface Subject {
    /** Names it in messages. */
    String describe();

    /** Whether it has a buffered write now: Recon's check, asked in normal mode only. */
    boolean hasBuffered();

    /**
     * Applies its buffered writes to the data store now (lazy recovery).
     *
     * @return whether it had any
     * @throws DataStoreUnavailableException when the data store failed the apply: they stay buffered
     */
    boolean applyBuffered();

    /**
     * Reads the data store in a way that harms nothing, to learn whether it answers.
     *
     * @throws DataStoreUnavailableException when it does not
     */
    void probe();
  }

  final IqClient cache;

  /** The range this core serves under a lease from a multi-process coordinator; null in one process. */
  private final OwnedRange owner;

  /** The settings TARDIS shares with write-back, as its builder checked them. */
  final EngineSettings engineSettings;

  final CacheTier tier;
  final DataStore store;
  final Technique technique;
  final TeleportedWrites teleported;
  final ReplicaRepair replicaRepair;
  private final ProcessMode mode;
  private final DrainThreads recoveryWorkers;
  private final int alpha;
  private final boolean bufferUnknownOutcomes;
  private final boolean lookForBufferedWrites;
  private final boolean queryRecoveryMisses;
  private final LongAdder absorbed = new LongAdder();
  private final LongAdder recoveredByForeground = new LongAdder();
  private final LongAdder unavailableMisses = new LongAdder();
  private final LongAdder outcomeUnknown = new LongAdder();
  private final LongAdder refused = new LongAdder();
  private boolean closed;

  /** Whether the last recovery pass found listed documents: workers keep going without waiting for a check. */
  private volatile boolean recoveryFoundWork;

  /**
   * Settings read from {@link Tardis.Builder} and, for those write-back shares, from its {@code shared} ones; {@code
   * listings} names the partitions of the buffered writes.
   */
  TardisCore(Tardis.Builder settings, EngineSettings shared, String listings, OwnedRange owner) {
    this.owner = owner;
    this.engineSettings = shared;
    this.cache = shared.cache();
    this.tier =
        settings.lockTtl == null
            ? CacheTier.iqServers(cache, settings.changeCachedValuesConditionally)
            : CacheTier.stockMemcached(
                cache, settings.lockTtl, settings.changeCachedValuesConditionally);
    // A range owner's statements carry its fence token: once a later owner raised the range's
    // fence in the data store, what this one still writes or recovers is refused there.
    this.store =
        owner == null
            ? settings.store
            : new OwnerStore(settings.store, new FenceToken(owner.fence(), owner.epoch()));
    this.technique = settings.technique;
    this.alpha = settings.drainBatch;
    this.bufferUnknownOutcomes = settings.bufferUnknownOutcomes;
    this.lookForBufferedWrites = settings.lookForBufferedWrites;
    this.queryRecoveryMisses = settings.queryRecoveryMisses;
    this.mode = new ProcessMode(settings.recoverAfterSuccesses, settings.checkInterval);
    this.teleported =
        new TeleportedWrites(
            cache,
            tier,
            this.store,
            listings,
            shared.replicas(),
            settings.partitions,
            shared.pinnedBudgetBytes(),
            shared.lockTimeout(),
            shared.storeRetryDeadline(),
            settings.storeRound == 0 ? settings.drainBatch : settings.storeRound);
    // A process that starts while writes are buffered (another process's, or its own earlier run's)
    // treats them as recovery does until they are applied.
    if (teleported.anyListed()) {
      mode.somethingBuffered();
    }
    List<IntSupplier> passes =
        IntStream.range(0, shared.drainThreads())
            .<IntSupplier>mapToObj(worker -> () -> asOwner(this::recoveryPass))
            .toList();
    this.recoveryWorkers =
        new DrainThreads("tardis-recovery", shared.drainThreads(), passes, shared.idlePause(), 1);
    this.replicaRepair =
        new ReplicaRepair(
            cache,
            // Contextual restores a restarted server's markers, whatever R.
            shared.replicas() > 1 || settings.solution == Solution.CONTEXTUAL
                ? shared.replicaCheckInterval()
                : Duration.ZERO,
            shared.replaceDownServerAfter(),
            "tardis-replica-repair");
    replicaRepair.register(() -> asOwner(teleported::restoreReplicas));
  }

  /**
   * Makes {@code changes} durable: in the data store, or, when the data store fails them or the technique says so,
   * in the cache tier through {@code teleport}.
   *
   * @throws TardisOutcomeUnknownException when the data store may have applied non-idempotent changes, which
   *     buffering could apply twice: not acknowledged
   * @throws BufferRefusedException when pinned memory refused to buffer them: not acknowledged
   */
  void write(Subject subject, List<EntityChanges> changes, Runnable teleport) {
    Mode now = probedMode(subject);
    Technique.WriteAction action = technique.onWrite(now, buffered(now, subject));
    if (action == Technique.WriteAction.BUFFER) {
      teleport(subject, teleport, null);
      return;
    }
    if (action == Technique.WriteAction.APPLY_THEN_WRITE) {
      try {
        applyBuffered(subject);
      } catch (StoreFencedOutException laterOwner) {
        throw laterOwner;
      } catch (DataStoreUnavailableException down) {
        teleport(subject, teleport, down); // this write was not sent: safe to buffer whatever it is
        return;
      }
    }
    try {
      store.apply(changes);
      mode.succeeded();
    } catch (StoreFencedOutException laterOwner) {
      // Not an outage: a later owner of the range took it over, and the data store refused this
      // statement (nothing applied). Teleporting it would keep a former owner's write.
      throw laterOwner;
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
      boolean idempotent = changes.stream().allMatch(one -> one.changes().isIdempotent());
      if (!down.notSent() && !idempotent && !bufferUnknownOutcomes) {
        outcomeUnknown.increment();
        throw new TardisOutcomeUnknownException(
            "the data store may have applied the write of "
                + subject.describe()
                + " before it failed, and the write is not idempotent, so it was not buffered: not"
                + " acknowledged",
            down);
      }
      teleport(subject, teleport, down);
    }
  }

  /** Buffers the write in the cache tier; {@code why} is the data store's failure, if one led here. */
  private void teleport(Subject subject, Runnable teleport, DataStoreUnavailableException why) {
    try {
      teleport.run();
    } catch (BufferRefusedException full) {
      refused.increment();
      BufferRefusedException refusal =
          new BufferRefusedException(
              "the data store "
                  + (why == null ? "is recovering" : "failed the write of " + subject.describe())
                  + ", and "
                  + full.getMessage()
                  + ": not acknowledged",
              full,
              why == null || why.notSent());
      if (why != null) {
        refusal.addSuppressed(why);
      }
      throw refusal;
    }
    absorbed.increment();
  }

  /**
   * Serves a cache miss with {@code read} of the data store, after applying the subject's buffered writes where the
   * technique does.
   *
   * @throws TardisUnavailableException when the technique cannot serve the miss now (the data store is down, or may
   *     lack buffered writes): nothing was read
   */
  <T> T miss(Subject subject, Supplier<T> read) {
    Mode now = probedMode(subject);
    Technique.MissAction action = technique.onMiss(now, buffered(now, subject));
    if (queryRecoveryMisses && now == Mode.RECOVERY && action == Technique.MissAction.UNAVAILABLE) {
      action = Technique.MissAction.QUERY;
    }
    if (action == Technique.MissAction.UNAVAILABLE) {
      unavailableMisses.increment();
      throw new TardisUnavailableException(
          now == Mode.FAILED
              ? "the data store is down (this process is in failed mode): "
                  + subject.describe()
                  + " is not cached"
              : subject.describe()
                  + " is not cached, and with "
                  + technique
                  + " a miss waits until its buffered writes are applied by recovery",
          null);
    }
    try {
      if (action == Technique.MissAction.APPLY_THEN_QUERY) {
        applyBuffered(subject);
      }
      T found = read.get();
      mode.succeeded();
      return found;
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
      unavailableMisses.increment();
      throw new TardisUnavailableException(
          "the data store failed the read of " + subject.describe() + ", which is not cached",
          down);
    }
  }

  /** Whether the subject has a buffered write, where the mode's action depends on it (Recon's check). */
  private boolean buffered(Mode now, Subject subject) {
    return lookForBufferedWrites && technique.needsToKnowBuffered(now) && subject.hasBuffered();
  }

  /** Lazy recovery: applies the subject's buffered writes, if any, now. */
  private void applyBuffered(Subject subject) {
    boolean hadSome;
    try {
      hadSome = subject.applyBuffered();
    } catch (StoreFencedOutException laterOwner) {
      throw laterOwner; // not an outage: this process no longer owns the range
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
      throw down;
    }
    if (hadSome) {
      recoveredByForeground.increment();
    }
  }

  /**
   * The mode, moved on first when a check is due and no recovery worker might: a probe read of the data store in
   * failed mode (of what was requested: a read that harms nothing), a look for listings in recovery.
   */
  private Mode probedMode(Subject subject) {
    Mode now = mode.current();
    if (now != Mode.NORMAL && mode.checkDue()) {
      checkWayOut(now, subject::probe);
      now = mode.current();
    }
    return now;
  }

  private void checkWayOut(Mode now, Runnable probe) {
    try {
      if (now == Mode.FAILED) {
        probe.run();
        mode.succeeded();
      } else if (!teleported.anyListed()) {
        mode.nothingBuffered();
      }
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
    }
  }

  /**
   * Runs {@code work} as the range's owner: not at all once this process lost the range (its new owner recovers),
   * and otherwise with every cache request fenced at the ownership's epoch, so that a pause past the takeover changes
   * nothing there. Without an owner, just runs it.
   */
  private int asOwner(IntSupplier work) {
    if (owner == null) {
      return work.getAsInt();
    }
    if (!owner.held()) {
      return 0;
    }
    try (FenceScope fenced = cache.fences().guard(owner.fence(), owner.epoch())) {
      return work.getAsInt();
    }
  }

  /**
   * One iteration of an active recovery worker; see {@link TeleportedWrites#recoverSome}. In failed mode it takes no
   * lock: it only probes the data store (one worker per check interval), because an apply that meets the data store
   * down holds its document's lock for the store's timeout, and writers of hot documents queued behind such
   * attempts until their leases gave up (a zipfian outage with 20 workers: 64 writes/s and 17 failed). Idle in
   * normal mode, the workers look for listings once per check interval between them.
   */
  private int recoveryPass() {
    if (mode.current() == Mode.FAILED) {
      if (mode.checkDue()) {
        teleported.anyDocument().ifPresent(key -> checkWayOut(Mode.FAILED, () -> store.read(key)));
      }
      return 0;
    }
    if (mode.current() == Mode.NORMAL && !recoveryFoundWork && !mode.checkDue()) {
      // Idle in normal mode: one look per check interval for the whole process (another process's
      // buffered writes), not one per worker per idle pause.
      return 0;
    }
    try {
      int found = teleported.recoverSome(alpha);
      recoveryFoundWork = found > 0;
      if (found < 0) {
        mode.nothingBuffered();
        return 0;
      }
      mode.succeeded();
      return found;
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
      throw down;
    }
  }

  Mode mode() {
    return mode.current();
  }

  /** The state now; reads every partition (one batched read). */
  TardisMetrics metrics() {
    PendingWritesPartition.Backlog backlog = teleported.backlog();
    return new TardisMetrics(
        technique,
        mode.current(),
        mode.transitions.sum(),
        backlog.documents(),
        backlog.oldest(),
        absorbed.sum(),
        teleported.applied.sum(),
        recoveredByForeground.sum(),
        unavailableMisses.sum(),
        outcomeUnknown.sum(),
        refused.sum(),
        teleported.pinnedBytes());
  }

  /** Stops the recovery workers and the replica repair; what is buffered stays in the cache tier. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    replicaRepair.close();
    recoveryWorkers.close();
  }
}
