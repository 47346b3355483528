package io.dendrite.core;

import io.dendrite.iq.client.IqClient;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The result sets of range predicates on one attribute of one collection ({@code WHERE attr BETWEEN lb AND ub}),
 * cached in the IQ cache tier and kept strongly consistent with the data store: no get returns a value older than the
 * last acknowledged write (the CPR paper, Figure 3).
 *
 * <p>Reads and writes name what they run: {@link #get get} runs the query bound under its name (on a miss) and
 * {@link #write write} the write command bound under its name. Both are bound when the Dendrite is built ({@link
 * Builder#query}, {@link Builder#command}), so a call site stays the same whatever the deployment.
 *
 * <p>Bounds are inclusive. Implementations are thread-safe.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
public interface Dendrite<K extends Comparable<? super K>, R> extends AutoCloseable {

  /**
   * Returns the rows whose attribute lies in [{@code lowerBound}, {@code upperBound}], ordered by the attribute:
   * from the cache if it holds them, otherwise from the query bound under the name {@code query}, caching the result.
   *
   * @throws IllegalArgumentException if no query is bound under {@code query}, or a bound is null, of the wrong type,
   *     outside the domain's [min, max], or {@code lowerBound > upperBound}
   * @throws DataStoreException if the query failed (nothing was cached)
   * @throws DendriteBusyException if conflicting writes held the interval past the lease timeout
   */
  List<R> get(String query, K lowerBound, K upperBound);

  /**
   * Writes {@code argument} with the write command bound under the name {@code command}: to the data store (or, under
   * write-back, to the write buffer), deleting or updating every cached result set whose interval overlaps [{@code
   * lowerBound}, {@code upperBound}], the interval the write touches (before and after it).
   *
   * <p>A write that fails throws one of two exceptions, whatever the deployment, and leaves the cache consistent
   * either way; its cause says what happened:
   *
   * <ul>
   *   <li>{@link NotAppliedException}: nothing changed, and the write may be retried as it is (leases stayed taken:
   *       {@link DendriteBusyException}; the range's owner was fenced out or lost the range before writing; the
   *       command said it changed nothing);
   *   <li>{@link OutcomeUnknownException}: the write may or may not have been applied (the data store or the cache
   *       tier failed while it was in flight, a forwarded write got no answer), so only the caller can tell whether
   *       running it again is harmless.
   * </ul>
   *
   * @throws IllegalArgumentException if no command is bound under {@code command}, {@code argument} is not of its
   *     type, or a bound is bad (as {@link #get}); nothing changed
   * @throws NotAppliedException if the write failed having changed nothing
   * @throws OutcomeUnknownException if the write failed and may have been applied
   */
  <C> void write(String command, K lowerBound, K upperBound, C argument);

  /** {@code <collection>.<domain>}: the range this Dendrite caches. */
  String rangeName();

  /** Gives the range up. Does not close the cache client. */
  @Override
  void close();

  /** Starts building a Dendrite for an attribute of type {@code type} whose rows {@code rows} encodes. */
  static <K extends Comparable<? super K>, R> Builder<K, R> builder(
      DomainType<K> type, RowCodec<K, R> rows) {
    return new Builder<>(type, rows);
  }

  /**
   * How a Dendrite is deployed ({@link Builder#deployment}): builds it from the builder's settings. The default, one
   * process, needs none.
   */
  @FunctionalInterface
  interface Deployment {
    /**
     * Builds the Dendrite {@code settings} describe.
     *
     * @throws IllegalStateException if a setting this deployment needs is missing or conflicts with another
     */
    <K extends Comparable<? super K>, R> Dendrite<K, R> deploy(Settings<K, R> settings);
  }

  /**
   * What every deployment reads from a {@link Builder}: the range, the cache servers and the bindings, and a copy of
   * the builder for each {@link RangeCache} the deployment builds ({@code rangeCache}, whose range, coordinator and
   * cache the deployment then sets).
   *
   * @param min the domain's smallest value, or null when none was given
   * @param max the domain's largest value, or null when none was given
   * @param writeBuffers write-back's buffers ({@link Builder#writeBack(WriteBuffers)}), or null; the bound commands
   *     were checked to take their changes. A deployment opens one per range it serves and sets it on the range's
   *     builder with {@link Builder#writeBackInto}
   * @param outageTolerance the outage tolerance ({@link Builder#outageTolerance}), or null; the bound commands were
   *     checked to take its changes. A deployment sets each range's ownership on the range's builder with {@link
   *     Builder#ownedUnder}, and the range's guard opens for it; the guard writes the data store, so bound writes
   *     go through the range's {@link RangeCache} as they are ({@link RangeCache#write(String, Comparable,
   *     Comparable, Object)})
   */
  record Settings<K extends Comparable<? super K>, R>(
      DomainType<K> type,
      RowCodec<K, R> rows,
      String collection,
      String domain,
      K min,
      K max,
      IqClient cache,
      Map<String, RangeQuery<K, R>> queries,
      Map<String, WriteCommand<K, R, ?>> commands,
      WriteBuffers<?> writeBuffers,
      OutageTolerance<?> outageTolerance,
      java.util.function.Supplier<Builder<K, R>> rangeCache) {}

  /**
   * Configures a {@link Dendrite}: the range, the cache servers, the write policy, the queries and write commands
   * by name.
   *
   * @param <K> the attribute's type
   * @param <R> the row type
   */
  final class Builder<K extends Comparable<? super K>, R> {
    final DomainType<K> type;
    final RowCodec<K, R> rows;
    String collection;
    String domain;
    K min;
    K max;
    IqClient cache;
    Coordinator coordinator = new LocalCoordinator();
    WritePolicy policy = WritePolicy.WRITE_AROUND;
    TypedWriteBuffer<K, ?> writeBuffer;
    WriteBuffers<?> writeBuffers;
    boolean closesWriteBuffer;
    OutageTolerance<?> outageTolerance;

    /** The ownership a deployment holds the range under ({@link #ownedUnder}); null in one process. */
    OwnedRange ownership;

    ChangeRecords<K, R, ?> changeRecords;
    double beta = 1.0;
    int alpha = 16;
    Duration intervalLeaseLifetime = Duration.ofSeconds(10);
    Duration intervalLeaseTimeout = Duration.ofSeconds(10);
    boolean leasesEnabled = true;
    boolean ownershipGuarded = true;
    boolean repairLapsedWrites = true;
    boolean dropCached;
    long nearCacheBytes = RangeCache.DEFAULT_NEAR_CACHE_BYTES;
    final Map<String, RangeQuery<K, R>> queries = new LinkedHashMap<>();
    final Map<String, WriteCommand<K, R, ?>> commands = new LinkedHashMap<>();
    Deployment deployment;
    boolean writesDropNearCopies = true;
    boolean nearOnlyCopiesDeleteServersCopies = true;

    private Builder(DomainType<K> type, RowCodec<K, R> rows) {
      this.type = Objects.requireNonNull(type, "type");
      this.rows = Objects.requireNonNull(rows, "rows");
    }

    /** The table (SQL) or collection (MongoDB) the predicates read. Required. */
    public Builder<K, R> collection(String name) {
      this.collection = RangeNames.check("collection", name);
      return this;
    }

    /** The attribute the predicates range over. Required. */
    public Builder<K, R> domain(String name) {
      this.domain = RangeNames.check("domain", name);
      return this;
    }

    /** The attribute's smallest and largest values (optional); bounds outside are refused. */
    public Builder<K, R> range(K min, K max) {
      K lower = type.cast("min", min);
      K upper = type.cast("max", max);
      if (lower.compareTo(upper) > 0) {
        throw new IllegalArgumentException("min " + lower + " is greater than max " + upper);
      }
      this.min = lower;
      this.max = upper;
      return this;
    }

    /** The IQ cache servers. Required. */
    public Builder<K, R> cache(IqClient client) {
      this.cache = Objects.requireNonNull(client, "cache");
      return this;
    }

    /**
     * Who owns which range; defaults to a {@link LocalCoordinator}, which claims the range in the cache tier and
     * refuses a second owner, here or in another process.
     */
    public Builder<K, R> coordinator(Coordinator coordinator) {
      this.coordinator = Objects.requireNonNull(coordinator, "coordinator");
      return this;
    }

    /**
     * Write-around (default) or write-through. Write-back is chosen with its buffers, {@link
     * #writeBack(WriteBuffers)}.
     *
     * @throws IllegalArgumentException for {@link WritePolicy#WRITE_BACK}, which needs its buffers
     */
    public Builder<K, R> writePolicy(WritePolicy policy) {
      Objects.requireNonNull(policy, "policy");
      if (policy == WritePolicy.WRITE_BACK) {
        throw new IllegalArgumentException(
            "policy WRITE_BACK needs the buffers its writes go to: use writeBack(buffers), e.g."
                + " writeBack(WriteBack.to(store)) of module dendrite-writeback");
      }
      this.policy = policy;
      return this;
    }

    /**
     * {@link WritePolicy#WRITE_BACK}: writes are buffered in the cache tier, in the buffers {@code buffers} opens for
     * the Dendrite's range (one buffer in one process; one per range a process owns with {@code ManyProcesses}), and
     * drained to the data store later. The write-back module's {@code WriteBack.to(store)} is such buffers. Every
     * command bound with {@link #command} must take the change the buffers hold (the module's {@code
     * DocumentCommand}s do), which {@link #build} checks; a write hands its argument to the range's buffer, and the
     * command's {@link WriteCommand#apply} is not used. The Dendrite closes the buffers it opened.
     */
    public Builder<K, R> writeBack(WriteBuffers<?> buffers) {
      this.writeBuffers = Objects.requireNonNull(buffers, "buffers");
      this.writeBuffer = null;
      this.policy = WritePolicy.WRITE_BACK;
      return this;
    }

    /**
     * {@link WritePolicy#WRITE_BACK} into one buffer the caller opened and closes ({@code RangeWriteBack}), for a
     * {@link RangeCache} built with {@link #buildRangeCache}: the Dendrite writes only {@code commands}, each a kind
     * whose commands are changes the buffer holds (this signature checks it); a write of one hands its command to the
     * buffer, and its {@link WriteCommand#apply} is not used. A write of another kind is refused before anything
     * changes. {@link #writeBack(WriteBuffers)} is the setting for every deployment.
     *
     * @throws IllegalArgumentException when {@code commands} is empty
     */
    public <C> Builder<K, R> writeBack(
        WriteBuffer<K, C> buffer, Collection<? extends WriteCommand<K, R, ? extends C>> commands) {
      this.writeBuffer = TypedWriteBuffer.of(buffer, commands);
      this.writeBuffers = null;
      this.policy = WritePolicy.WRITE_BACK;
      return this;
    }

    /**
     * Keeps taking writes while the data store is down, and keeps misses from reading a data store that lacks them
     * ({@link OutageTolerance}; the TARDIS module's {@code TardisRanges}): every write's data-store statement and
     * every miss's query go through the guard it opens for the range. For write-around and write-through, in one
     * process; write-back needs none (it keeps writes buffered through an outage already). Every command bound with
     * {@link #command} must take the change the guard writes (the write-back module's {@code DocumentCommand}s do),
     * which {@link #build} checks; the command's {@link WriteCommand#apply} is not used.
     */
    public Builder<K, R> outageTolerance(OutageTolerance<?> tolerance) {
      this.outageTolerance = Objects.requireNonNull(tolerance, "tolerance");
      return this;
    }

    /**
     * Keeps writes whose change is of {@code records}' type in the cached result sets they touch as appended change
     * records, one request per entry and no rewriting of result sets; such writes need no {@link CacheUpdate}.
     * Optional: without it, every write-through or write-back refresh reads and rewrites each entry.
     */
    public Builder<K, R> changeRecords(ChangeRecords<K, R, ?> records) {
      this.changeRecords = Objects.requireNonNull(records, "records");
      return this;
    }

    /**
     * The largest fraction of their rows two cached result sets may share, in [0, 1] (the CPR paper's β, default
     * 1): 0 caches every row once, as points; 1 caches each range's result whole, however much it overlaps others.
     */
    public Builder<K, R> maxSharedFraction(double beta) {
      if (!(beta >= 0 && beta <= 1)) {
        throw new IllegalArgumentException(
            "maxSharedFraction (beta) must be in [0, 1], got " + beta);
      }
      this.beta = beta;
      return this;
    }

    /** How many delete log records to batch per cache server (α, default 16). */
    public Builder<K, R> logBatch(int alpha) {
      if (alpha < 1) {
        throw new IllegalArgumentException("logBatch (alpha) must be at least 1, got " + alpha);
      }
      this.alpha = alpha;
      return this;
    }

    /**
     * How long an interval lease lives (so a dead holder cannot block forever) and how long to wait for
     * one before giving up with {@link DendriteBusyException} (defaults 10 s each).
     *
     * <p>A write whose data-store write takes longer than the lifetime (a row-lock wait, a stalled store) lets
     * overlapping gets query and cache the rows it has not changed yet. It stays correct: after its data-store write
     * it waits for those gets' fills to end (at most one lifetime) and drops every cached result overlapping its
     * interval, counted in {@link DendriteMetrics#writesOutlivingLease()}. Such writes cost the cache its results for
     * the interval, so keep the lifetime above the data store's slow writes.
     */
    public Builder<K, R> intervalLeases(Duration lifetime, Duration timeout) {
      if (lifetime == null || lifetime.isNegative() || lifetime.isZero()) {
        throw new IllegalArgumentException(
            "intervalLeases lifetime must be positive, got " + lifetime);
      }
      if (timeout == null || timeout.isNegative()) {
        throw new IllegalArgumentException(
            "intervalLeases timeout must be zero or more, got " + timeout);
      }
      this.intervalLeaseLifetime = lifetime;
      this.intervalLeaseTimeout = timeout;
      return this;
    }

    /**
     * Drops, when built, every cached result set the range's log records name, instead of serving them: for a
     * successor whose predecessor stopped without finishing its writes (its session ended, it was killed or paused).
     * Such a write may have changed the data store and left, under its lease, a cached result older than that: the
     * IQ servers drop it when the lease lapses, but a successor may serve before then, and a write whose statement
     * outlived its lease may have left a fill from before the statement. Default false: the predecessor handed the
     * range over after its writes ended.
     */
    public Builder<K, R> dropCachedOnBuild(boolean drop) {
      this.dropCached = drop;
      return this;
    }

    /**
     * Whether the range's owner keeps the decoded rows of its cached results in its own heap too (the near cache, L1,
     * in front of the cache servers), so that a hit costs no round trip. On by default; it is used only where this
     * process owns the range alone and can show it does ({@link Coordinator.RangeClaim#mayKeepResultsInMemory}):
     * {@link LocalCoordinator}'s claim. Every write of the range runs here, drops the copies it changes before it
     * changes them in the cache servers, and a copy read before a write can never be kept after it: a near-cache hit
     * is never older than an acknowledged write. Off: every hit reads the cache servers.
     */
    public Builder<K, R> nearCache(boolean on) {
      return nearCacheMaxBytes(on ? RangeCache.DEFAULT_NEAR_CACHE_BYTES : 0);
    }

    /**
     * The near cache's bound, in bytes of the results it holds as the cache servers encode them (default 64 MiB; the
     * decoded rows take more heap, by how much depends on the row type). 0 turns it off.
     */
    public Builder<K, R> nearCacheMaxBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException(
            "nearCacheMaxBytes must be 0 (off) or more, got " + bytes);
      }
      this.nearCacheBytes = bytes;
      return this;
    }

    /**
     * Binds {@code query} under {@code name}: a {@link Dendrite#get get} naming it runs it on a miss.
     *
     * @throws IllegalArgumentException if {@code name} breaks {@link BoundNames}' rule or is bound already
     */
    public Builder<K, R> query(String name, RangeQuery<K, R> query) {
      BoundNames.bind(queries, name, Objects.requireNonNull(query, "query"));
      return this;
    }

    /**
     * Binds the write command {@code kind} under {@code name}: a {@link Dendrite#write write} naming it runs it with
     * the write's argument, which must be of the kind's {@link WriteCommand#type type}.
     *
     * @throws IllegalArgumentException if {@code name} breaks {@link BoundNames}' rule or is bound already
     */
    public Builder<K, R> command(String name, WriteCommand<K, R, ?> kind) {
      BoundNames.bind(commands, name, Objects.requireNonNull(kind, "kind"));
      return this;
    }

    /**
     * How the Dendrite is deployed: by default in this process alone, which claims the range in the cache tier and
     * refuses a second owner; {@code ManyProcesses} (module {@code dendrite-coordination}) splits the domain into
     * ranges that the service's processes own one at a time through ZooKeeper, forwarding to each other. The queries,
     * commands and every other setting here hold for every deployment, so changing it changes no call site.
     */
    public Builder<K, R> deployment(Deployment deployment) {
      this.deployment = Objects.requireNonNull(deployment, "deployment");
      return this;
    }

    /**
     * A new builder with these settings, the bindings and the deployment included: for deployments that build one
     * {@link RangeCache} per range from a template.
     */
    public Builder<K, R> copy() {
      Builder<K, R> copy = new Builder<>(type, rows);
      copy.collection = collection;
      copy.domain = domain;
      copy.min = min;
      copy.max = max;
      copy.cache = cache;
      copy.coordinator = coordinator;
      copy.policy = policy;
      copy.writeBuffer = writeBuffer;
      copy.writeBuffers = writeBuffers;
      copy.outageTolerance = outageTolerance;
      copy.ownership = ownership;
      copy.changeRecords = changeRecords;
      copy.beta = beta;
      copy.alpha = alpha;
      copy.intervalLeaseLifetime = intervalLeaseLifetime;
      copy.intervalLeaseTimeout = intervalLeaseTimeout;
      copy.leasesEnabled = leasesEnabled;
      copy.ownershipGuarded = ownershipGuarded;
      copy.repairLapsedWrites = repairLapsedWrites;
      copy.dropCached = dropCached;
      copy.nearCacheBytes = nearCacheBytes;
      copy.writesDropNearCopies = writesDropNearCopies;
      copy.nearOnlyCopiesDeleteServersCopies = nearOnlyCopiesDeleteServersCopies;
      copy.closesWriteBuffer = closesWriteBuffer;
      copy.queries.putAll(queries);
      copy.commands.putAll(commands);
      copy.deployment = deployment;
      return copy;
    }

    /**
     * Test-only: claims the range from the coordinator without the cache tier, as before the ownership guard, to show
     * that two owners of one range serve stale results.
     */
    Builder<K, R> withoutOwnershipGuardForTesting() {
      this.ownershipGuarded = false;
      return this;
    }

    /**
     * Test-only: a write whose interval lease lapsed before its data-store write ended returns without dropping what
     * gets cached meanwhile, to show that {@code SlowWriteIT} catches the stale reads that leaves.
     */
    Builder<K, R> withoutLapsedWriteRepairForTesting() {
      this.repairLapsedWrites = false;
      return this;
    }

    /**
     * Test-only: writes leave the near cache's copies alone, to show that the consistency checker catches the stale
     * hits that serves.
     */
    Builder<K, R> nearCacheNotDroppedByWritesForTesting() {
      this.writesDropNearCopies = false;
      return this;
    }

    /**
     * Test-only: a result a write keeps in the near cache alone keeps its old copy in the cache servers too, to show
     * that the consistency checker catches the stale hits that serves once the near copy is gone.
     */
    Builder<K, R> nearOnlyCopiesKeepServersCopiesForTesting() {
      this.nearOnlyCopiesDeleteServersCopies = false;
      return this;
    }

    /** Test-only: turns every lease off, to show that the consistency checker catches stale reads. */
    Builder<K, R> withoutLeasesForTesting() {
      this.leasesEnabled = false;
      return this;
    }

    /**
     * Builds the Dendrite: claims the range from the coordinator and rebuilds PrInT from the range's
     * log records in the cache before returning.
     *
     * @throws IllegalStateException if a required setting is missing or the range is owned elsewhere
     */
    public Dendrite<K, R> build() {
      if (deployment == null) {
        return buildRangeCache();
      }
      checkSettings();
      if (writeBuffer != null) {
        throw new IllegalStateException(
            "writeBack(buffer, commands) gives one process's buffer; a deployment over many processes opens"
                + " one per range: use writeBack(buffers)");
      }
      return deployment.deploy(
          new Settings<>(
              type,
              rows,
              collection,
              domain,
              min,
              max,
              cache,
              Map.copyOf(queries),
              Map.copyOf(commands),
              writeBuffers,
              outageTolerance,
              this::copy));
    }

    /**
     * Builds the one-process engine every deployment runs (a {@link RangeCache}), which besides the named queries and
     * commands takes functions at the call ({@link RangeCache#get(Comparable, Comparable, RangeQuery)}): claims the
     * range from the coordinator and rebuilds PrInT from the range's log records in the cache before returning.
     *
     * @throws IllegalStateException if a required setting is missing or the range is owned elsewhere
     */
    public RangeCache<K, R> buildRangeCache() {
      checkSettings();
      if (writeBuffers == null) {
        return new RangeCache<>(this);
      }
      WriteBuffer<K, ?> opened = writeBuffers.open(type, collection, domain, cache);
      try {
        Builder<K, R> writingBack = writeBackInto(opened);
        writingBack.closesWriteBuffer = true;
        return writingBack.buildRangeCache();
      } catch (RuntimeException failed) {
        opened.close();
        throw failed;
      }
    }

    /**
     * A copy of this builder for a range that a deployment over many processes owns under {@code ownership}: the
     * range's outage-tolerance guard, if any, is opened for that ownership ({@link OutageTolerance#open(DomainType,
     * OwnedRange, IqClient)}), so that what it keeps and applies is fenced at the ownership's epoch.
     */
    public Builder<K, R> ownedUnder(OwnedRange ownership) {
      Builder<K, R> copy = copy();
      copy.ownership = Objects.requireNonNull(ownership, "ownership");
      return copy;
    }

    /**
     * A copy of this builder that writes back into {@code buffer}, which {@link #writeBack(WriteBuffers)}'s buffers
     * opened for the range: for a deployment that opens each range's buffer itself, and closes it after the range's
     * {@link RangeCache}.
     *
     * @throws IllegalStateException when no buffers were given, or as {@link #writeBack(WriteBuffers)}'s check
     */
    public Builder<K, R> writeBackInto(WriteBuffer<K, ?> buffer) {
      if (writeBuffers == null) {
        throw new IllegalStateException(
            "writeBackInto(buffer) is for a Dendrite built with writeBack(buffers)");
      }
      Builder<K, R> copy = copy();
      copy.writeBuffers = null;
      copy.writeBuffer = typed(buffer, writeBuffers);
      return copy;
    }

    /** {@code buffer}, opened by {@code buffers}, with the bound commands checked to take the changes it holds. */
    @SuppressWarnings("unchecked")
    private <C> TypedWriteBuffer<K, C> typed(WriteBuffer<K, ?> buffer, WriteBuffers<C> buffers) {
      return TypedWriteBuffer.checked((WriteBuffer<K, C>) buffer, buffers.changeType(), commands);
    }

    /**
     * Builds the {@link CachedReads} of this range: what a process that does not own it reads from the cache. It
     * claims nothing and keeps no PrInT.
     *
     * @throws IllegalStateException if a required setting is missing
     */
    public CachedReads<K, R> buildReads() {
      checkSettings();
      return new CachedReads<>(
          type,
          cache,
          new CacheKeys<>(collection, domain, type),
          new CachedRows<>(rows, changeRecords));
    }

    private void checkSettings() {
      if (outageTolerance != null) {
        if (policy == WritePolicy.WRITE_BACK) {
          throw new IllegalStateException(
              "outageTolerance(...) is for write-around and write-through: write-back keeps writes buffered"
                  + " through a data-store outage already");
        }
        TypedWriteBuffer.checkedKinds(
            outageTolerance.changeType(),
            commands,
            "the outage tolerance cannot keep",
            "its guard writes");
      }
      if ((writeBuffer != null || writeBuffers != null) && policy != WritePolicy.WRITE_BACK) {
        throw new IllegalStateException(
            "writeBack(buffers) and writePolicy(" + policy + ") conflict: choose one");
      }
      if (writeBuffers != null) {
        // At every build, before a deployment runs or a buffer is opened (which may start an
        // engine's threads).
        TypedWriteBuffer.checkedKinds(writeBuffers.changeType(), commands);
      }
      if (collection == null || domain == null || cache == null) {
        throw new IllegalStateException("collection, domain and cache are required");
      }
    }
  }
}
