package io.dendrite.writeback.document;

import io.dendrite.core.FenceToken;
import io.dendrite.core.OwnedRange;
import io.dendrite.core.RangeNotOwnedException;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.engine.EngineSettings;
import io.dendrite.writeback.engine.WriteBackEngineBuilder;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.kernel.BufferedWriteLocks;
import io.dendrite.writeback.kernel.BufferedWrites;
import io.dendrite.writeback.kernel.DocumentEngine;
import io.dendrite.writeback.kernel.DrainThreads;
import io.dendrite.writeback.kernel.DrainWorker;
import io.dendrite.writeback.kernel.EngineClaim;
import io.dendrite.writeback.kernel.EngineCounters;
import io.dendrite.writeback.kernel.KnownValues;
import io.dendrite.writeback.kernel.LeaseLostException;
import io.dendrite.writeback.kernel.PendingWritesPartition;
import io.dendrite.writeback.kernel.PinnedBudget;
import io.dendrite.writeback.kernel.PinnedReplicas;
import io.dendrite.writeback.kernel.ReplicaRepair;
import io.dendrite.writeback.kernel.RetryingStore;
import io.dendrite.writeback.kernel.UndecodableValues;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import io.dendrite.writeback.store.OwnerStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The document-level write-back policy (Design 1 of the write-back thesis): a write is buffered in the cache tier,
 * pinned and replicated on R servers, and acknowledged; background threads apply buffered writes to the data store
 * later. Reads through {@link #read} see every acknowledged write. When the pinned-memory budget is spent, writes
 * fall back to write-through, in order with what was buffered before them.
 *
 * <pre>{@code
 * try (DocumentWriteBack writeBack = DocumentWriteBack.builder().cache(iqClient).store(mySqlStore).replicas(3).build()) {
 *   writeBack.write(new EntityKey("users", 42), ChangeSequence.of(Change.inc("score", 1)));
 *   Optional<Entity> user = writeBack.read(new EntityKey("users", 42)); // sees the increment
 * }
 * }</pre>
 *
 * <p>Thread-safe. Every process that writes these documents must go through a {@code DocumentWriteBack} over the same
 * cache servers with the same replica and partition counts; a write that bypasses it is not ordered with the
 * buffered ones. {@link #close()} stops the background threads, drains what is still buffered for up to {@link
 * Builder#drainOnClose}, and leaves the rest in the cache (pinned, replicated and listed), where another engine (or
 * this one, restarted) drains it; it logs which it did. The cache client and the store stay the caller's to close.
 */
public final class DocumentWriteBack implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DocumentWriteBack.class);

  /** In-process document locks are shared by hash; enough that unrelated documents rarely wait for each other. */
  private static final int DOCUMENT_LOCK_STRIPES = 4096;

  /**
   * Heap for the buffered writes a single-process engine remembers ({@link KnownValues}): about 200 000 documents
   * known to have none, or the values of the recently written ones. Past it, writes read their buffered write again.
   */
  private static final long KNOWN_VALUES_BYTES = 32L << 20;

  private final BufferedWrites bufferedWrites;
  private final RetryingStore store;
  private final List<PendingWritesPartition> partitions;
  private final PinnedBudget budget;
  private final EngineCounters counters;
  private final DrainThreads drainThreads;
  private final int replicas;
  private final PinnedReplicas pinnedReplicas;
  private final IqClient cache;
  private final ReplicaRepair replicaRepair;
  private final Duration drainOnClose;
  private final DocumentEngine engine = new Engine();
  private final EngineClaim claim;

  /** The range whose lease lets this engine lock in its own process; null when it is not owned by one. */
  private final OwnedRange ownedRange;

  private boolean closed;

  private DocumentWriteBack(Builder builder, EngineSettings settings, EngineClaim claim) {
    this.replicas = settings.replicas();
    this.drainOnClose = settings.drainOnClose();
    Duration drainDelay = builder.drainDelay;
    this.cache = settings.cache();
    PinnedReplicas replicas = new PinnedReplicas(settings.cache(), settings.replicas());
    this.pinnedReplicas = replicas;
    Clock clock = Clock.systemUTC();
    this.counters = new EngineCounters(clock);
    this.claim = claim;
    this.ownedRange = builder.ownedRange;
    BufferedWriteLocks documentLocks =
        builder.singleProcess
            ? BufferedWriteLocks.inProcess(
                replicas, DOCUMENT_LOCK_STRIPES, new KnownValues(KNOWN_VALUES_BYTES), claim::check)
            : ownedRange != null
                // No KnownValues: the range's fence keeps its other owners out, but nothing keeps
                // a shared engine (or another range's) off the same documents, and a value this
                // engine remembered would overwrite what that one buffered since
                // (SecondEngineOnTheSameDocumentsIT). Each write reads its buffered write.
                ? BufferedWriteLocks.inProcess(
                    replicas, DOCUMENT_LOCK_STRIPES, KnownValues.none(), this::requireOwnedRange)
                : BufferedWriteLocks.replicaLeases(replicas, settings.lockTimeout());
    // A range-owned engine lists its documents in partitions of its range's own, which only the
    // range's owner drains: another process's engine never locks them.
    String partitionNames =
        ownedRange == null ? "" : ownedRange.collection() + "." + ownedRange.domain() + ":";
    PendingWritesPartition.claimCount(replicas, partitionNames, builder.partitions, "write-back's");
    this.partitions =
        IntStream.range(0, builder.partitions)
            .mapToObj(index -> new PendingWritesPartition(replicas, partitionNames + index))
            .toList();
    // A range-owned engine's statements carry the ownership's fence token: once a later owner
    // raised
    // the range's fence in the data store, what this engine still drains is refused there.
    this.store =
        new RetryingStore(
            ownedRange == null || builder.storeFenceOff
                ? builder.store
                : new OwnerStore(
                    builder.store, new FenceToken(ownedRange.fence(), ownedRange.epoch())),
            settings.storeRetryDeadline(),
            counters.retries);
    this.budget = new PinnedBudget(settings.pinnedBudgetBytes());
    this.bufferedWrites =
        new BufferedWrites(
            documentLocks,
            replicas,
            partitions,
            store,
            budget,
            new UndecodableValues(replicas, counters.undecodable),
            clock,
            builder.drainBatch,
            counters.drained,
            counters.fallbacks,
            BufferedWriteKey.WRITE_BACK,
            BufferedWrites.WhenFull.WRITE_THROUGH);
    // One pass per drain thread over its share of the partitions, so one batch may span partitions.
    int threads = Math.max(1, settings.drainThreads());
    List<IntSupplier> passes =
        IntStream.range(0, threads)
            .<IntSupplier>mapToObj(
                thread -> {
                  List<PendingWritesPartition> share =
                      IntStream.range(0, partitions.size())
                          .filter(i -> i % threads == thread)
                          .mapToObj(partitions::get)
                          .toList();
                  return () -> {
                    if (ownedRange != null && !ownedRange.held()) {
                      return 0; // the range's new owner drains it; its locks are not ours
                    }
                    try (FenceScope fenced = fenced()) {
                      return drainRound(share, clock.instant().minus(drainDelay));
                    }
                  };
                })
            .toList();
    // With a delay, a round drains everything due and the next comes half a delay later: each
    // document is drained between one and one and a half delays after its first buffered change,
    // and the partitions are read twice per delay rather than every idle pause, however long the
    // backlog of not yet due listings.
    this.drainThreads =
        new DrainThreads(
            "writeback-drain",
            settings.drainThreads(),
            passes,
            drainDelay.isZero()
                ? settings.idlePause()
                : DrainWorker.max(settings.idlePause(), drainDelay.dividedBy(2)),
            drainDelay.isZero() ? builder.drainBatch : Integer.MAX_VALUE);
    // With one replica a restarted server took the only copy: there is nothing to restore.
    this.replicaRepair =
        new ReplicaRepair(
            settings.cache(),
            settings.replicas() > 1 ? settings.replicaCheckInterval() : Duration.ZERO,
            settings.replaceDownServerAfter(),
            "writeback-replica-repair");
    replicaRepair.register(
        () -> {
          try (FenceScope fenced = fenced()) {
            return restoreReplicas();
          }
        });
  }

  /**
   * For a range-owned engine, the scope that guards the calling thread's cache requests with the range's fence at
   * this ownership's epoch, so that a server refuses them once a later owner raised it; null (no guard) otherwise.
   */
  private FenceScope fenced() {
    return ownedRange == null ? null : cache.fences().guard(ownedRange.fence(), ownedRange.epoch());
  }

  /** Refuses a range-owned engine's locking once it cannot tell it still owns the range. */
  private void requireOwnedRange() {
    if (!ownedRange.held()) {
      throw new RangeNotOwnedException(
          "this write-back engine belongs to range "
              + ownedRange.collection()
              + "."
              + ownedRange.domain()
              + " at epoch "
              + ownedRange.epoch()
              + ", which this process no longer owns: nothing was buffered");
    }
  }

  /**
   * This engine's steps for the {@link RangeWriteBack} built on it, which shares this package so that nothing public
   * or global hands them out.
   */
  DocumentEngine engine() {
    return engine;
  }

  /** Starts configuring an engine; {@link Builder#cache} and {@link Builder#store} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Buffers {@code changes} to the document {@code key}, after its earlier buffered changes. Returns once every
   * replica holds the buffered write, or, on the write-through fallback, once the data store applied it.
   *
   * @throws IllegalArgumentException when the changes conflict with the buffered ones (e.g. {@code $inc} of a
   *     field a buffered {@code $set} made a string); nothing is buffered then
   * @throws io.dendrite.iq.client.IqException when a replica's server cannot be reached, or when the fallback
   *     cannot pin the idempotent form of the earlier buffered changes (see {@link Builder#pinnedBudgetBytes});
   *     the write is not acknowledged and may or may not be applied later
   * @throws io.dendrite.core.DataStoreUnavailableException when the fallback met a store that stayed
   *     down past the retry deadline
   * @throws io.dendrite.writeback.engine.UndecodableValueException when the document's buffered write cannot be decoded;
   *     nothing is buffered (a drain moves that value aside, after which writes succeed)
   */
  public void write(EntityKey key, ChangeSequence changes) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(changes, "changes");
    try (FenceScope fenced = fenced()) {
      LeaseLostException.untilKept(() -> bufferedWrites.write(key, changes));
    }
  }

  /**
   * Reads the document as a cache miss must: its buffered write, if any, is applied to the data store first, so
   * the result includes every acknowledged write.
   *
   * @throws io.dendrite.writeback.engine.UndecodableValueException when its buffered write cannot be decoded, so cannot be
   *     applied first (a drain moves that value aside, after which reads succeed)
   */
  public Optional<Entity> read(EntityKey key) {
    try (FenceScope fenced = fenced()) {
      drain(key);
    }
    return store.read(key);
  }

  /**
   * Applies the document's buffered write, if it has one, to the data store now, as a read must: what a range miss
   * does for each document its interval's buffered writes touch.
   */
  void drain(EntityKey key) {
    drainAll(List.of(key));
  }

  /**
   * Applies the buffered writes those of {@code keys} have, in batches of {@link Builder#drainBatch}: what a range
   * miss does for the documents its interval's buffered writes touch. Documents without one cost one batched read.
   *
   * @throws io.dendrite.writeback.engine.UndecodableValueException when one cannot be decoded (see {@link
   *     BufferedWrites#drainForRead})
   */
  void drainAll(Collection<EntityKey> keys) {
    try (FenceScope fenced = fenced()) {
      Set<EntityKey> buffered = bufferedWrites.bufferedAmong(keys);
      if (!buffered.isEmpty()) {
        List<EntityKey> inOrder = keys.stream().filter(buffered::contains).distinct().toList();
        LeaseLostException.untilKept(() -> bufferedWrites.drainForRead(inOrder));
      }
    }
  }

  /**
   * Drains every buffered write listed now, in the calling thread, alongside the background threads.
   *
   * @throws io.dendrite.core.DataStoreUnavailableException when the store stays down past the retry
   *     deadline; what was not drained stays buffered
   */
  public void drainNow() {
    try (FenceScope fenced = fenced()) {
      drainUntilNoneListed();
    }
  }

  private void drainUntilNoneListed() {
    boolean foundWork = true;
    while (foundWork) {
      foundWork = false;
      try {
        foundWork = drainRound(partitions, Instant.MAX) > 0;
      } catch (LeaseLostException lost) {
        foundWork = true;
      }
    }
  }

  /** Every document the partitions list as buffered now (one batched read of them all). */
  List<EntityKey> listedDocuments() {
    return PendingWritesPartition.entries(pinnedReplicas, partitions).stream()
        .map(PendingWritesPartition.Entry::key)
        .distinct()
        .toList();
  }

  /**
   * Drains every document {@code share} lists now that was first listed before {@code listedBefore}, in batches across
   * its partitions; returns how many it found.
   */
  private int drainRound(List<PendingWritesPartition> share, Instant listedBefore) {
    List<EntityKey> listed =
        PendingWritesPartition.entries(pinnedReplicas, share).stream()
            .filter(entry -> entry.since().isBefore(listedBefore))
            .map(PendingWritesPartition.Entry::key)
            .toList();
    bufferedWrites.drainAll(listed);
    return listed.size();
  }

  /**
   * Writes every listing and every listed buffered write again to each of its replicas that lacks it: what the
   * repair thread does once a cache server is back (see {@link Builder#replicaCheckInterval}).
   *
   * @return how many copies were restored (every buffered write written again counts once)
   */
  int restoreReplicas() {
    return bufferedWrites.restoreListedReplicas();
  }

  /** The engine's state now; reads every pending-writes partition (one batched read). */
  public WriteBackMetrics metrics() {
    List<Instant> pendingSince =
        PendingWritesPartition.entries(pinnedReplicas, partitions).stream()
            .map(PendingWritesPartition.Entry::since)
            .toList();
    return counters.snapshot(pendingSince, budget.used(), pinnedReplicas.unpinnedRefused());
  }

  /**
   * Stops the drain and repair threads (each finishes the batch it is in), then drains in the calling thread until
   * nothing is listed, the store stays unavailable, or {@link Builder#drainOnClose} passes. What is left stays
   * buffered in the cache for any engine over the same servers: handed over, not dropped. Logs which happened, with
   * the count left. Calling it again does nothing.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      drainAndHandOver();
    } finally {
      claim.close();
    }
  }

  private void drainAndHandOver() {
    replicaRepair.close();
    drainThreads.close();
    if (ownedRange != null && !ownedRange.held()) {
      log.info(
          "write-back of range {}.{} closed after the range moved: its new owner drains what is buffered",
          ownedRange.collection(),
          ownedRange.domain());
      return;
    }
    try (FenceScope fenced = fenced()) {
      drainOrHandOver();
    }
  }

  private void drainOrHandOver() {
    long drainedBefore = counters.drained.sum();
    long deadline = System.nanoTime() + drainOnClose.toNanos();
    String why = "the close drain time (" + drainOnClose + ") ran out";
    while (System.nanoTime() < deadline) {
      try {
        if (drainRound(partitions, Instant.MAX) == 0) {
          log.info(
              "write-back closed: drained {} buffered writes, none left buffered",
              counters.drained.sum() - drainedBefore);
          return;
        }
      } catch (LeaseLostException lost) {
        // another holder moved in between: look again
      } catch (RuntimeException failed) {
        why = "draining failed: " + failed;
        break;
      }
    }
    long drained = counters.drained.sum() - drainedBefore;
    int left;
    try {
      left = PendingWritesPartition.entries(pinnedReplicas, partitions).size();
    } catch (RuntimeException unknown) {
      log.warn(
          "write-back closed: drained {} buffered writes; {}, and the buffered writes left could not be counted"
              + " ({}): they stay pinned and listed in the cache for another engine",
          drained,
          why,
          unknown.toString());
      return;
    }
    if (left == 0) {
      log.info("write-back closed: drained {} buffered writes, none left buffered", drained);
    } else {
      log.warn(
          "write-back closed: drained {} buffered writes and left {} buffered, handed over ({}): they stay pinned"
              + " on {} servers each and listed, and any DocumentWriteBack over the same cache servers drains them",
          drained,
          left,
          why,
          replicas);
    }
  }

  /** This engine's steps for the range write-back built on it ({@link #engine()}). */
  private final class Engine implements DocumentEngine {
    @Override
    public IqClient cache() {
      return cache;
    }

    @Override
    public int replicas() {
      return replicas;
    }

    @Override
    public List<EntityKey> listedDocuments() {
      return DocumentWriteBack.this.listedDocuments();
    }

    @Override
    public Optional<OwnedRange> ownedRange() {
      return Optional.ofNullable(ownedRange);
    }

    @Override
    public FenceScope fenced() {
      return DocumentWriteBack.this.fenced();
    }

    @Override
    public void close() {
      DocumentWriteBack.this.close();
    }

    @Override
    public ReplicaRepair replicaRepair() {
      return replicaRepair;
    }

    @Override
    public BufferedWrites.StartedWrite startWrite(Map<EntityKey, ChangeSequence> changes) {
      return bufferedWrites.startWrite(changes);
    }

    @Override
    public void drainAll(Collection<EntityKey> keys) {
      DocumentWriteBack.this.drainAll(keys);
    }

    @Override
    public Set<EntityKey> bufferedAmong(Collection<EntityKey> keys) {
      return bufferedWrites.bufferedAmong(keys);
    }
  }

  /** Configures a {@link DocumentWriteBack}. */
  public static final class Builder extends WriteBackEngineBuilder<Builder> {
    private DataStore store;
    private boolean storeFenceOff;
    private int partitions = 8;
    private int drainBatch = 64;
    private boolean singleProcess;
    private OwnedRange ownedRange;
    private Duration claimLifetime = Duration.ofSeconds(10);
    private Duration drainDelay = Duration.ZERO;

    private Builder() {}

    @Override
    protected Builder self() {
      return this;
    }

    /** Test-only negative control: a range-owned engine's statements do not carry its fence token. */
    Builder storeFenceOffForTesting() {
      this.storeFenceOff = true;
      return this;
    }

    /** The data store buffered writes are drained to (required). */
    public Builder store(DataStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /**
     * α: pending-writes partitions (default 8); at least the number of concurrent writers and drain threads. The first
     * engine records its count in the cache tier, and {@link #build} refuses an engine over the same buffered writes
     * with another (it could neither find nor finish draining what the others listed).
     */
    public Builder partitions(int partitions) {
      this.partitions = atLeast("partitions", 1, partitions);
      return this;
    }

    /**
     * How long a buffered write waits before the drain threads apply it (default none): a document is drained once
     * its oldest buffered change is at least this old (the listing's time), so the changes made to it meanwhile are
     * merged into its one buffered write and reach the data store as one statement (the thesis's "prioritizing
     * buffered writes", section 6.5; Hazelcast's write-delay). It trades pinned memory (a delay's worth of buffered
     * writes) and the data store's lag for less data-store work per write; consistency does not change: a read that
     * misses applies the buffered writes it overlaps first, and {@link DocumentWriteBack#drainNow()} and {@link
     * DocumentWriteBack#close()} do not wait. With a delay, the drain threads look for due documents every half delay (or
     * {@link #idlePause}, whichever is longer).
     */
    public Builder drainDelay(Duration delay) {
      this.drainDelay = notNegative("drainDelay", delay);
      return this;
    }

    /**
     * How many documents one drain applies in one data-store round (default 64): one transaction in SQL, one
     * {@code bulkWrite} in MongoDB. Their locks are held until the round is done, so a writer of one of them waits
     * that long.
     */
    public Builder drainBatch(int documents) {
      this.drainBatch = atLeast("drainBatch", 1, documents);
      return this;
    }

    /**
     * Declares this engine the only one, in any process, that writes or drains its documents (default false): the
     * engine of a {@code RangeWriteBack}, whose coordinator gives a range to one process at a time, is. Documents
     * and pending-writes partitions are then locked in this process instead of by leases in the cache tier, which
     * saves four round trips per buffered write and per drained document. Two engines that both declare it over the
     * same documents can lose writes; a crashed engine's successor is safe (it starts with nothing locked).
     */
    public Builder singleProcess(boolean singleProcess) {
      this.singleProcess = singleProcess;
      return this;
    }

    /**
     * Makes this the engine of one range that this process owns under a lease ({@code PartitionedDendrite} hands
     * the range to the range's write buffer when it takes the range over): it buffers and drains only that range's
     * documents, in pending-writes partitions of the range's own, and locks them in this process while the lease
     * is {@link OwnedRange#held() held}, which saves four round trips per buffered write and per drained document
     * over locks in the cache tier. Every cache request it makes goes out guarded by the range's fence at the
     * ownership's epoch, so once another process took the range over, the servers refuse whatever this one still
     * sends (after a pause, say); its drain threads stop draining, and writes are refused with an {@link
     * IllegalStateException}.
     *
     * <p>In-process locks are safe only if no other range's engine writes the same documents: each document must
     * stay in one range (its range attribute never changes), which {@code RangeWriteBack} checks write by write
     * ({@code RangeWriteBack.Builder#documentAttribute}). Not with {@link #singleProcess}.
     */
    public Builder ownedRange(OwnedRange range) {
      this.ownedRange = Objects.requireNonNull(range, "range");
      return this;
    }

    /**
     * How long the cache tier's record of the running engines outlives an engine that stops renewing it (default 10
     * s, at least 2 s): a crashed {@link #singleProcess} engine's successor waits up to this long to start.
     */
    public Builder claimLifetime(Duration lifetime) {
      if (lifetime == null || lifetime.toSeconds() < 2) {
        throw new IllegalArgumentException("claimLifetime must be at least 2 s, got " + lifetime);
      }
      this.claimLifetime = lifetime;
      return this;
    }

    /**
     * Starts the engine and its drain threads.
     *
     * @throws IllegalStateException when the cache or the store is missing, or R exceeds the cache's servers
     */
    public DocumentWriteBack build() {
      requireCache();
      if (store == null) {
        throw new IllegalStateException("store is required");
      }
      if (singleProcess && ownedRange != null) {
        throw new IllegalStateException(
            "an engine is either singleProcess (the only one of its cache tier) or owned by a range, not both");
      }
      EngineSettings settings = settings();
      // In-process locks follow from holding the cache tier's write-back record alone, not from the
      // flag: a second engine, in this process or another, is refused when it starts.
      EngineClaim claim =
          singleProcess
              ? EngineClaim.exclusive(
                  settings.cache(), settings.replicas(), EngineClaim.holderName(), claimLifetime)
              : EngineClaim.shared(settings.cache(), settings.replicas(), claimLifetime);
      try {
        return new DocumentWriteBack(this, settings, claim);
      } catch (RuntimeException e) {
        claim.close();
        throw e;
      }
    }
  }
}
