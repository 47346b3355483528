package io.dendrite.tardis;

import io.dendrite.core.OwnedRange;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.engine.BufferRefusedException;
import io.dendrite.writeback.engine.EngineBuilder;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
 *
 * <p>On unmodified memcached ({@link Builder#stockMemcached}) the same API runs without leases: a document's misses
 * and writes, and its buffered write, take lock keys that lapse, and cached values change by {@code cas} on what was
 * read under the lock. What that leaves weaker (a holder paused past its lock's lifetime) is in docs/tardis.md.
 */
public final class Tardis implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Tardis.class);

  /** The partitions listing the documents this API buffered: {@code PendingWrites:tardis:<i>}. */
  private static final String LISTINGS = "tardis";

  private final TardisCore core;
  private final IqClient cache;
  private final DocumentCopies copies;
  private final DataStore store;
  private final boolean contextual;
  private final boolean markBeforeBuffering;
  private final boolean restoreMarkers;

  private Tardis(Builder builder, TardisCore core) {
    this.core = core;
    this.cache = core.cache;
    this.copies = core.tier.documentCopies(core.engineSettings.lockTimeout());
    this.store = core.store;
    this.contextual = builder.solution == Solution.CONTEXTUAL;
    this.markBeforeBuffering = builder.markBeforeBuffering;
    this.restoreMarkers = builder.restoreMarkers;
    if (contextual && restoreMarkers) {
      core.replicaRepair.register(this::restoreMarkers);
      try {
        restoreMarkers();
      } catch (RuntimeException notYet) {
        // Until it succeeds, a server without pready says "maybe" for every key: safe, only slower.
        log.warn("pending markers not restored yet; the replica repair tries again", notYet);
      }
    }
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
   * @throws BufferRefusedException when the data store failed the write and pinned memory refused to buffer it:
   *     not acknowledged, nothing buffered
   * @throws IllegalArgumentException when the changes conflict with the document (a type conflict); nothing changed
   * @throws IqException when the cache tier could not be reached or the document's lease not taken: not
   *     acknowledged, and may or may not be applied
   */
  public void write(EntityKey key, ChangeSequence changes) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(changes, "changes");
    String cacheKey = CachedDocuments.keyOf(key);
    copies.write(
        cacheKey,
        changes,
        pending -> {
          boolean[] buffered = {false};
          core.write(
              document(key, contextual ? pending : null),
              List.of(new EntityChanges(key, changes)),
              () -> {
                buffer(cacheKey, key, changes);
                buffered[0] = true;
              });
          // Contextual: a buffered write keeps the document's marker; a write the data store took
          // (after applying any buffered write first) clears it.
          return contextual && markBeforeBuffering && buffered[0];
        });
  }

  /**
   * Buffers the write; under {@link Solution#CONTEXTUAL}, marks the document first (under its Q lease), so that no
   * lease granted after the buffered write exists says "not pending".
   */
  private void buffer(String cacheKey, EntityKey key, ChangeSequence changes) {
    if (contextual
        && markBeforeBuffering
        && cache.pendingMarkers().mark(cacheKey) == Outcome.PINNED_MEMORY_FULL) {
      throw new BufferRefusedException(key, BufferRefusedException.Limit.SERVER_PINNED_MEMORY);
    }
    core.teleported.buffer(key, changes);
  }

  /**
   * Marks every listed document again and tells every server its markers are complete ({@code pready}): at build,
   * and after a server restarted (which lost its markers, so says "maybe" until then). A document that could not be
   * marked keeps every server's gate as it is, and the next pass tries again.
   *
   * @return 0: markers are not copies the replica repair counts
   * @throws IllegalStateException when a server's pinned memory refused a marker
   */
  private int restoreMarkers() {
    for (EntityKey key : core.teleported.listedDocuments()) {
      if (cache.pendingMarkers().mark(CachedDocuments.keyOf(key)) == Outcome.PINNED_MEMORY_FULL) {
        throw new IllegalStateException(
            "a cache server's pinned memory refused the pending marker of "
                + key
                + ": its gate stays closed (every lease says \"maybe\")");
      }
    }
    for (ServerAddress server : cache.config().servers()) {
      cache.pendingMarkers().ready(server);
    }
    return 0;
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
    return CachedDocuments.entity(
        key,
        copies.read(
            CachedDocuments.keyOf(key),
            pending ->
                core.miss(
                    document(key, contextual ? pending : null),
                    () -> store.read(key).map(Entity::fields))));
  }

  /**
   * A write or miss of one document: its own buffered write is all it depends on. {@code pending} is what its lease
   * grant said under {@link Solution#CONTEXTUAL}; null looks the buffered write up (Recon).
   */
  private TardisCore.Subject document(EntityKey key, Boolean pending) {
    return new TardisCore.Subject() {
      @Override
      public String describe() {
        return key.toString();
      }

      @Override
      public boolean hasBuffered() {
        return pending != null ? pending : core.teleported.has(key);
      }

      @Override
      public boolean applyBuffered() {
        return core.teleported.apply(key);
      }

      @Override
      public void probe() {
        store.read(key);
      }
    };
  }

  /** This process's mode now. */
  public Mode mode() {
    return core.mode();
  }

  /** The technique this instance runs. */
  public Technique technique() {
    return core.technique;
  }

  /** The state now; reads every partition (one batched read). */
  public TardisMetrics metrics() {
    return core.metrics();
  }

  /**
   * Stops the recovery workers and the replica repair. What is still buffered stays pinned and listed in the cache,
   * where any {@code Tardis} over the same servers applies it. The cache client and the store stay the caller's.
   */
  @Override
  public void close() {
    core.close();
  }

  /**
   * Configures a {@link Tardis}; each setter refuses a bad value at once. The settings TARDIS shares with write-back
   * (the cache, R, the drain threads that are its recovery workers, the pinned budget, lock and retry times, the
   * replica repair) are {@link EngineBuilder}'s, declared and documented there once.
   */
  public static final class Builder extends EngineBuilder<Builder> {
    DataStore store;
    Technique technique = Technique.TARDIS;
    int partitions = 64;
    int drainBatch = 50;
    int storeRound; // 0: α
    int recoverAfterSuccesses = 1;
    Duration checkInterval = Duration.ofSeconds(1);
    Duration lockTtl;
    boolean bufferUnknownOutcomes;
    boolean lookForBufferedWrites = true;
    boolean queryRecoveryMisses;
    Solution solution = Solution.RECON;
    boolean markBeforeBuffering = true;
    boolean restoreMarkers = true;
    boolean changeCachedValuesConditionally = true;

    /** TARDIS's own defaults of two shared settings: see {@link EngineBuilder}. */
    private Builder() {
      drainThreads(4);
      storeRetryDeadline(Duration.ZERO);
    }

    @Override
    protected Builder self() {
      return this;
    }

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
     * On stock memcached, changes values under a lock with plain {@code set}s and {@code delete}s instead of {@code
     * cas} on what was read under it; on IQ servers, keeps a cached copy whose write's commit failed (the lease lapsed)
     * instead of deleting it. For the negative controls of the tests only (a stale copy stays), so not public.
     */
    Builder changingCachedValuesUnconditionally() {
      this.changeCachedValuesConditionally = false;
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

    /**
     * Buffers without marking the document first under {@link Solution#CONTEXTUAL}: other processes' grants then say
     * "not pending" for it. For the negative control of the tests only (they read and write past it), so not public.
     */
    Builder withoutMarking() {
      this.markBeforeBuffering = false;
      return this;
    }

    /**
     * Never marks listed documents again nor sends {@code pready} (at build, after a server restart). For the tests
     * only: to take a server's gate into their own hands, so not public.
     */
    Builder withoutRestoringMarkers() {
      this.restoreMarkers = false;
      return this;
    }

    /**
     * The cache servers are unmodified memcached (1.6 or later), not our IQ servers. Start each with {@code -M}, so
     * that a full server refuses a store ({@link BufferRefusedException.Limit#SERVER_MEMORY}) instead of evicting
     * a buffered write. Without I/Q leases, a document's writes and misses, and its buffered write, are locked with
     * keys that lapse after {@code lockTtl} (memcached counts whole seconds: a lock lives between {@code lockTtl} - 1
     * s and {@code lockTtl}). Keep it above the longest a lock is held: the store's timeout plus {@link
     * #storeRetryDeadline}, and a cache round trip or two. What is weaker than on IQ servers: docs/tardis.md.
     *
     * @throws IllegalArgumentException when {@code lockTtl} is under 2 s
     */
    public Builder stockMemcached(Duration lockTtl) {
      Objects.requireNonNull(lockTtl, "lockTtl");
      if (lockTtl.compareTo(Duration.ofSeconds(2)) < 0) {
        throw new IllegalArgumentException(
            "lockTtl must be at least 2 s (memcached counts whole seconds), got " + lockTtl);
      }
      this.lockTtl = lockTtl;
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

    /**
     * How a process learns that a document may have a buffered write (default {@link Solution#RECON}). Every process
     * over one cache tier must use the same: a Recon process neither marks nor clears markers.
     */
    public Builder solution(Solution solution) {
      this.solution = Objects.requireNonNull(solution, "solution");
      return this;
    }

    /** ω: partitions listing the documents with buffered writes (default 64). Every process must use the same. */
    public Builder partitions(int partitions) {
      this.partitions = atLeast("partitions", 1, partitions);
      return this;
    }

    /**
     * Documents a recovery worker applies per partition it reads (the thesis' α, not the CPR paper's log batch: {@code
     * Dendrite.Builder#logBatch}), in one store round (one transaction in SQL) under one holding of their locks (default 50: 93,000 buffered documents were recovered in 12 s by 20 workers with
     * α = 50, 25 s with α = 10; docs/benchmarks.md).
     */
    public Builder drainBatch(int drainBatch) {
      this.drainBatch = atLeast("drainBatch", 1, drainBatch);
      return this;
    }

    /**
     * Documents a recovery worker applies per store round, when not its α: 1 is the thesis' one document per round.
     * For the recovery benchmark's comparison only, so not public.
     */
    Builder storeRound(int batch) {
      this.storeRound = atLeast("storeRound", 1, batch);
      return this;
    }

    /** p: data-store operations that must go through before failed mode becomes recovery (default 1). */
    public Builder recoverAfterSuccesses(int successes) {
      this.recoverAfterSuccesses = atLeast("recoverAfterSuccesses", 1, successes);
      return this;
    }

    /**
     * How often, at most, a request checks the way out of failed mode (a read of the data store) or of recovery (a
     * look at the partitions) when no recovery worker did (default 1 s).
     */
    public Builder checkInterval(Duration interval) {
      this.checkInterval = notNegative("checkInterval", interval);
      return this;
    }

    /**
     * Builds it, and starts its recovery workers.
     *
     * @throws IllegalStateException when the cache or store is missing, or R exceeds the cache's servers
     */
    public Tardis build() {
      return new Tardis(this, buildCore(LISTINGS));
    }

    /** The cache given to {@link #cache}, or null: TARDIS for ranges checks it is the Dendrite's. */
    IqClient cacheGiven() {
      return givenCache();
    }

    /**
     * The core for a front end whose buffered writes are listed in the partitions {@code listings}, after the checks
     * of {@link #build}.
     */
    TardisCore buildCore(String listings) {
      return buildCore(listings, null);
    }

    /**
     * {@link #buildCore(String)} for a range this process owns under {@code owner} (null for none): its data-store
     * statements carry the ownership's fence token and its recovery runs fenced at the ownership's epoch.
     */
    TardisCore buildCore(String listings, OwnedRange owner) {
      if (store == null) {
        throw new IllegalStateException("cache and store are required");
      }
      requireCache();
      if (lockTtl != null && solution == Solution.CONTEXTUAL) {
        throw new IllegalStateException(
            "Solution.CONTEXTUAL needs our IQ servers' pending markers; stock memcached has none: use"
                + " RECON");
      }
      return new TardisCore(this, settings(), listings, owner);
    }
  }
}
