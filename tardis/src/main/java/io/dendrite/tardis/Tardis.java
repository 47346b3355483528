package io.dendrite.tardis;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.RefreshLease;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.internal.Arguments;
import io.dendrite.writeback.internal.BufferRefusedException;
import io.dendrite.writeback.internal.DrainThreads;
import io.dendrite.writeback.internal.ReplicaRepair;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Documents cached in front of MySQL or MongoDB, write-through, that keep accepting writes while the data store is
 * down (TARDIS, chapter 4 of the write-back and TARDIS thesis). Reads are served from the cache under I leases and
 * filled from the data store on a miss; writes go to the data store under the document's Q lease and refresh the
 * cached copy. A write the data store fails is <em>teleported</em> instead: buffered in the cache tier (pinned on R
 * servers, listed for recovery) and acknowledged, and the process enters {@link Mode#FAILED}. Active recovery
 * workers apply buffered writes once the data store answers; the {@link Technique} decides how misses and writes are
 * served until none is left.
 *
 * <pre>{@code
 * try (Tardis tardis = Tardis.builder().cache(iqClient).store(mySqlStore).technique(Technique.TARDIS)
 *         .replicas(2).build()) {
 *   tardis.write(new EntityKey("users", 42), ChangeSequence.of(Change.inc("score", 1))); // acknowledged even if
 *   Optional<Entity> user = tardis.read(new EntityKey("users", 42));                     // MySQL is down
 * }
 * }</pre>
 *
 * <p>What is guaranteed: every acknowledged write reaches the data store exactly once ({@code $inc} included), also
 * when the process dies during recovery (another process, or this one restarted, applies what is buffered); a read
 * returns the latest acknowledged write or fails with {@link TardisUnavailableException}, never an older value. Every
 * process that writes these documents must go through a {@code Tardis} over the same cache servers with the same
 * replica and partition counts. Thread-safe.
 */
public final class Tardis implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Tardis.class);

  private final IqClient cache;
  private final DataStore store;
  private final Technique technique;
  private final ProcessMode mode;
  private final TeleportedWrites teleported;
  private final DrainThreads recoveryWorkers;
  private final ReplicaRepair replicaRepair;
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

  private Tardis(Builder builder) {
    this.cache = builder.cache;
    this.store = builder.store;
    this.technique = builder.technique;
    this.alpha = builder.arAlpha;
    this.bufferUnknownOutcomes = builder.bufferUnknownOutcomes;
    this.lookForBufferedWrites = builder.lookForBufferedWrites;
    this.queryRecoveryMisses = builder.queryRecoveryMisses;
    this.mode = new ProcessMode(builder.recoverAfterSuccesses, builder.checkInterval);
    this.teleported =
        new TeleportedWrites(
            cache,
            store,
            builder.replicas,
            builder.partitions,
            builder.pinnedBudgetBytes,
            builder.lockTimeout,
            builder.applyRetryDeadline);
    // A process that starts while writes are buffered (another process's, or its own earlier run's)
    // treats them as recovery does until they are applied.
    if (teleported.anyListed()) {
      mode.somethingBuffered();
    }
    List<IntSupplier> passes =
        IntStream.range(0, builder.arWorkers)
            .<IntSupplier>mapToObj(worker -> this::recoveryPass)
            .toList();
    this.recoveryWorkers =
        new DrainThreads("tardis-recovery", builder.arWorkers, passes, builder.idlePause, 1);
    this.replicaRepair =
        new ReplicaRepair(
            cache,
            builder.replicas > 1 ? builder.replicaCheckInterval : Duration.ZERO,
            builder.replaceDownServerAfter,
            "tardis-replica-repair");
    replicaRepair.register(teleported::restoreReplicas);
  }

  /** Starts configuring; {@link Builder#cache} and {@link Builder#store} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Applies {@code changes} to the document: to the data store, or, when the data store fails it or the technique
   * says so, to the document's buffered write in the cache tier. Either way the cached copy, if any, is refreshed.
   * Returns once the write is durable in one or the other.
   *
   * @throws TardisOutcomeUnknownException when the data store may have applied a non-idempotent write and buffering
   *     it could apply it twice: not acknowledged
   * @throws TeleportRefusedException when the data store failed the write and pinned memory refused to buffer it:
   *     not acknowledged, nothing buffered
   * @throws IllegalArgumentException when the changes conflict with the document (a type conflict); nothing changed
   * @throws IqException when the cache tier could not be reached or the document's lease not taken: not
   *     acknowledged, and may or may not be applied
   */
  public void write(EntityKey key, ChangeSequence changes) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(changes, "changes");
    String cacheKey = CachedDocuments.keyOf(key);
    Transaction transaction = cache.beginTransaction();
    try {
      if (!(transaction.readForUpdate(cacheKey) instanceof RefreshResult.Granted granted)) {
        throw new IqException("another writer kept the lease on " + cacheKey);
      }
      RefreshLease lease = granted.lease();
      writeThroughOrTeleport(key, changes);
      // Durable from here: the write is acknowledged whatever happens to the cached copy.
      try {
        if (lease.current().isPresent()) {
          Optional<Map<String, Object>> after =
              changes.applyTo(CachedDocuments.decode(lease.current().get()));
          lease.swap(CachedDocuments.encode(after));
        }
        transaction.commit();
      } catch (RuntimeException notRefreshed) {
        dropCachedCopy(transaction, cacheKey, notRefreshed);
      }
    } catch (TardisOutcomeUnknownException unknown) {
      transaction.deleteAndRelease();
      throw unknown;
    } catch (RuntimeException failed) {
      transaction.release();
      throw failed;
    }
  }

  /**
   * Deletes the cached copy a durable write could not refresh (its in-memory application failed, or the commit did),
   * so that no read finds the old value; if even that fails, the old value stays until its lease lapses and it is
   * evicted, which is logged.
   */
  private static void dropCachedCopy(
      Transaction transaction, String cacheKey, RuntimeException notRefreshed) {
    try {
      transaction.deleteAndRelease();
    } catch (RuntimeException notDropped) {
      notDropped.addSuppressed(notRefreshed);
      log.warn(
          "a write was applied but the cached copy {} could not be refreshed or dropped",
          cacheKey,
          notDropped);
    }
  }

  private void writeThroughOrTeleport(EntityKey key, ChangeSequence changes) {
    Mode now = probedMode(key);
    Technique.WriteAction action = technique.onWrite(now, buffered(now, key));
    if (action == Technique.WriteAction.BUFFER) {
      teleport(key, changes, null);
      return;
    }
    if (action == Technique.WriteAction.APPLY_THEN_WRITE) {
      try {
        applyBuffered(key);
      } catch (DataStoreUnavailableException down) {
        teleport(key, changes, down); // this write was not sent: safe to buffer whatever it is
        return;
      }
    }
    try {
      store.apply(List.of(new EntityChanges(key, changes)));
      mode.succeeded();
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
      if (!down.notSent() && !changes.isIdempotent() && !bufferUnknownOutcomes) {
        outcomeUnknown.increment();
        throw new TardisOutcomeUnknownException(
            "the data store may have applied the write of "
                + key
                + " before it failed, and the write is not idempotent, so it was not buffered: not"
                + " acknowledged",
            down);
      }
      teleport(key, changes, down);
    }
  }

  /** Buffers the write in the cache tier; {@code why} is the data store's failure, if one led here. */
  private void teleport(EntityKey key, ChangeSequence changes, DataStoreUnavailableException why) {
    try {
      teleported.buffer(key, changes);
    } catch (BufferRefusedException full) {
      refused.increment();
      TeleportRefusedException refusal =
          new TeleportRefusedException(
              "the data store "
                  + (why == null ? "is recovering" : "failed the write of " + key)
                  + ", and "
                  + full.getMessage()
                  + ": not acknowledged",
              full.limit() == BufferRefusedException.Limit.PINNED_BUDGET
                  ? TeleportRefusedException.Reason.PINNED_BUDGET
                  : TeleportRefusedException.Reason.SERVER_PINNED_MEMORY,
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
   * Reads the document: from the cache, or on a miss from the data store (after applying its buffered write, where
   * the technique does), filling the cache.
   *
   * @throws TardisUnavailableException when the technique cannot serve the miss now (the data store is down, or may
   *     lack buffered writes): nothing was read
   * @throws IqException when the cache tier could not be reached, or another reader kept the document's lease
   */
  public Optional<Entity> read(EntityKey key) {
    Objects.requireNonNull(key, "key");
    String cacheKey = CachedDocuments.keyOf(key);
    ReadResult result = cache.read(cacheKey);
    if (result instanceof ReadResult.Hit hit) {
      return CachedDocuments.entity(key, CachedDocuments.decode(hit.value()));
    }
    if (result instanceof ReadResult.Busy busy) {
      throw new IqException(
          "another process kept the lease on " + cacheKey + " for " + busy.waited());
    }
    LeaseHandle lease = result instanceof ReadResult.Leased leased ? leased.lease() : null;
    try {
      Optional<Map<String, Object>> fields = readMiss(key);
      if (lease != null) {
        lease.fill(CachedDocuments.encode(fields));
      }
      return CachedDocuments.entity(key, fields);
    } finally {
      if (lease != null) {
        lease.close();
      }
    }
  }

  private Optional<Map<String, Object>> readMiss(EntityKey key) {
    Mode now = probedMode(key);
    Technique.MissAction action = technique.onMiss(now, buffered(now, key));
    if (queryRecoveryMisses && now == Mode.RECOVERY && action == Technique.MissAction.UNAVAILABLE) {
      action = Technique.MissAction.QUERY;
    }
    if (action == Technique.MissAction.UNAVAILABLE) {
      unavailableMisses.increment();
      throw new TardisUnavailableException(
          now == Mode.FAILED
              ? "the data store is down (this process is in failed mode): " + key + " is not cached"
              : key
                  + " is not cached, and with "
                  + technique
                  + " a miss waits until its buffered writes are applied by recovery",
          null);
    }
    try {
      if (action == Technique.MissAction.APPLY_THEN_QUERY) {
        applyBuffered(key);
      }
      Optional<Map<String, Object>> fields = store.read(key).map(Entity::fields);
      mode.succeeded();
      return fields;
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
      unavailableMisses.increment();
      throw new TardisUnavailableException(
          "the data store failed the read of " + key + ", which is not cached", down);
    }
  }

  /** Whether the document has a buffered write, where the mode's action depends on it (Recon's check). */
  private boolean buffered(Mode now, EntityKey key) {
    return lookForBufferedWrites && technique.needsToKnowBuffered(now) && teleported.has(key);
  }

  /** Lazy recovery: applies the document's buffered write, if any, now. */
  private void applyBuffered(EntityKey key) {
    boolean hadOne;
    try {
      hadOne = teleported.apply(key);
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
      throw down;
    }
    if (hadOne) {
      recoveredByForeground.increment();
    }
  }

  /**
   * The mode, moved on first when a check is due and no recovery worker might: a probe read of the data store in
   * failed mode (of the requested document: a read that harms nothing), a look for listings in recovery.
   */
  private Mode probedMode(EntityKey key) {
    Mode now = mode.current();
    if (now != Mode.NORMAL && mode.checkDue()) {
      checkWayOut(now, key);
      now = mode.current();
    }
    return now;
  }

  private void checkWayOut(Mode now, EntityKey key) {
    try {
      if (now == Mode.FAILED) {
        store.read(key);
        mode.succeeded();
      } else if (!teleported.anyListed()) {
        mode.nothingBuffered();
      }
    } catch (DataStoreUnavailableException down) {
      mode.failed(down);
    }
  }

  /**
   * One iteration of an active recovery worker; see {@link TeleportedWrites#recoverSome}. In failed mode it takes no
   * lock: it only probes the data store (one worker per check interval), because an apply that meets the data store
   * down holds its document's lock for the store's timeout, and writers of hot documents queued behind such
   * attempts until their leases gave up (a zipfian outage with 20 workers: 64 writes/s and 17 failed).
   */
  private int recoveryPass() {
    if (mode.current() == Mode.FAILED) {
      if (mode.checkDue()) {
        teleported.anyDocument().ifPresent(key -> checkWayOut(Mode.FAILED, key));
      }
      return 0;
    }
    try {
      int found = teleported.recoverSome(alpha);
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

  /** This process's mode now. */
  public Mode mode() {
    return mode.current();
  }

  /** The technique this instance runs. */
  public Technique technique() {
    return technique;
  }

  /** The state now; reads every partition (one batched read). */
  public TardisMetrics metrics() {
    List<Instant> since = teleported.listedSince();
    return new TardisMetrics(
        technique,
        mode.current(),
        mode.transitions.sum(),
        since.size(),
        since.stream().min(Instant::compareTo),
        absorbed.sum(),
        teleported.applied.sum(),
        recoveredByForeground.sum(),
        unavailableMisses.sum(),
        outcomeUnknown.sum(),
        refused.sum(),
        teleported.pinnedBytes());
  }

  /**
   * Stops the recovery workers and the replica repair. What is still buffered stays pinned and listed in the cache,
   * where any {@code Tardis} over the same servers applies it. The cache client and the store stay the caller's.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    replicaRepair.close();
    recoveryWorkers.close();
  }

  /** Configures a {@link Tardis}; each setter refuses a bad value at once. */
  public static final class Builder {
    private IqClient cache;
    private DataStore store;
    private Technique technique = Technique.TARDIS;
    private int replicas = 1;
    private int partitions = 64;
    private int arWorkers = 4;
    private int arAlpha = 10;
    private int recoverAfterSuccesses = 1;
    private long pinnedBudgetBytes = Long.MAX_VALUE;
    private Duration lockTimeout = Duration.ofSeconds(10);
    private Duration applyRetryDeadline = Duration.ZERO;
    private Duration checkInterval = Duration.ofSeconds(1);
    private Duration idlePause = Duration.ofMillis(50);
    private Duration replicaCheckInterval = Duration.ofSeconds(1);
    private Duration replaceDownServerAfter = Duration.ofSeconds(30);
    private boolean bufferUnknownOutcomes;
    private boolean lookForBufferedWrites = true;
    private boolean queryRecoveryMisses;

    private Builder() {}

    /**
     * Serves the misses TAR and DIS refuse in recovery mode from the data store, which may lack buffered writes. For
     * the negative control of the tests only (it reads stale), so not public.
     */
    Builder queryingRecoveryMisses() {
      this.queryRecoveryMisses = true;
      return this;
    }

    /**
     * Turns Recon's check off: in normal mode a miss or write goes to the data store without looking for the
     * document's buffered write. For the negative control of the tests only (another process's buffered write then
     * lands after a newer write), so not public.
     */
    Builder withoutLookingForBufferedWrites() {
      this.lookForBufferedWrites = false;
      return this;
    }

    /**
     * Turns the outcome check off: a non-idempotent write the data store may have applied is buffered anyway. For the
     * negative control of the tests only (it applies such writes twice), so not public.
     */
    Builder bufferUnknownOutcomes() {
      this.bufferUnknownOutcomes = true;
      return this;
    }

    /** The cache tier: our IQ servers (required). */
    public Builder cache(IqClient cache) {
      this.cache = Objects.requireNonNull(cache, "cache");
      return this;
    }

    /**
     * The data store (required). Open it with a short timeout ({@code MySqlStore.open(url, pool, timeout)}): a
     * write waits that long, holding its document's lease, before it is buffered instead.
     */
    public Builder store(DataStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /** How misses and writes are served until recovery ends (default {@link Technique#TARDIS}). */
    public Builder technique(Technique technique) {
      this.technique = Objects.requireNonNull(technique, "technique");
      return this;
    }

    /** R: cache servers each buffered write is pinned on (default 1); at most the number of servers. */
    public Builder replicas(int replicas) {
      this.replicas = Arguments.atLeast("replicas", 1, replicas);
      return this;
    }

    /** ω: partitions listing the documents with buffered writes (default 64). Every process must use the same. */
    public Builder partitions(int partitions) {
      this.partitions = Arguments.atLeast("partitions", 1, partitions);
      return this;
    }

    /** Active recovery workers (default 4); 0 leaves recovery to misses and writes (lazy recovery only). */
    public Builder arWorkers(int arWorkers) {
      this.arWorkers = Arguments.atLeast("arWorkers", 0, arWorkers);
      return this;
    }

    /** α: documents a recovery worker applies per partition it reads (default 10). */
    public Builder arAlpha(int arAlpha) {
      this.arAlpha = Arguments.atLeast("arAlpha", 1, arAlpha);
      return this;
    }

    /** p: data-store operations that must go through before failed mode becomes recovery (default 1). */
    public Builder recoverAfterSuccesses(int successes) {
      this.recoverAfterSuccesses = Arguments.atLeast("recoverAfterSuccesses", 1, successes);
      return this;
    }

    /**
     * Pinned bytes, every replica counted, this process may buffer (default no limit); past it a failed write is
     * refused with {@link TeleportRefusedException}. Keep it below the servers' pinned quota.
     */
    public Builder pinnedBudgetBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("pinnedBudgetBytes must not be negative, got " + bytes);
      }
      this.pinnedBudgetBytes = bytes;
      return this;
    }

    /** How long a write or recovery waits for a buffered write's lock (default 10 s). */
    public Builder lockTimeout(Duration timeout) {
      this.lockTimeout = Arguments.notNegative("lockTimeout", timeout);
      return this;
    }

    /**
     * How long an apply of a buffered write retries a data store that fails it (default 0: one attempt, then the
     * process is in failed mode and tries again later). Keep it well below the servers' lease lifetime.
     */
    public Builder applyRetryDeadline(Duration deadline) {
      this.applyRetryDeadline = Arguments.notNegative("applyRetryDeadline", deadline);
      return this;
    }

    /**
     * How often, at most, a request checks the way out of failed mode (a read of the data store) or of recovery (a
     * look at the partitions) when no recovery worker did (default 1 s).
     */
    public Builder checkInterval(Duration interval) {
      this.checkInterval = Arguments.notNegative("checkInterval", interval);
      return this;
    }

    /** How long a recovery worker rests after finding nothing to apply (default 50 ms). */
    public Builder idlePause(Duration pause) {
      this.idlePause = Arguments.notNegative("idlePause", pause);
      return this;
    }

    /** As {@code WriteBack.Builder#replicaCheckInterval} (default 1 s; {@link Duration#ZERO} turns it off). */
    public Builder replicaCheckInterval(Duration interval) {
      this.replicaCheckInterval = Arguments.notNegative("replicaCheckInterval", interval);
      return this;
    }

    /** As {@code WriteBack.Builder#replaceDownServerAfter} (default 30 s). */
    public Builder replaceDownServerAfter(Duration downFor) {
      this.replaceDownServerAfter = Arguments.notNegative("replaceDownServerAfter", downFor);
      return this;
    }

    /**
     * Builds it, and starts its recovery workers.
     *
     * @throws IllegalStateException when the cache or store is missing, or R exceeds the cache's servers
     */
    public Tardis build() {
      if (cache == null || store == null) {
        throw new IllegalStateException("cache and store are required");
      }
      int servers = cache.config().servers().size();
      if (replicas > servers) {
        throw new IllegalStateException(
            "replicas (" + replicas + ") must not exceed the cache's " + servers + " servers");
      }
      return new Tardis(this);
    }
  }
}
