package io.dendrite.tardis;

import io.dendrite.core.BoundNames;
import io.dendrite.core.CacheUpdate;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DendriteMetrics;
import io.dendrite.core.DomainType;
import io.dendrite.core.NotAppliedException;
import io.dendrite.core.RangeCache;
import io.dendrite.core.RangeNames;
import io.dendrite.core.RowCodec;
import io.dendrite.core.WriteCommand;
import io.dendrite.core.WritePolicy;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.document.DocumentCommand;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * TARDIS for cached range results: a write-through {@link Dendrite} over one collection and range attribute, with
 * its query fixed to the store's {@code readRange}, whose writes go to the data store while it answers and are
 * teleported into the cache tier while it does not. A teleported write is buffered per document (as {@link Tardis} buffers one) and its interval is indexed with
 * its documents (the CPR paper's BuWrInT, kept by write-back's kernel over the buffered writes as a {@code
 * RangeWriteBack} keeps it over a {@code DocumentWriteBack}'s): that index is
 * the thesis' mapping from cached entries to the buffered writes they depend on (Table 4.2), so that a range get that
 * misses in recovery applies every buffered write overlapping its interval before it queries (TARD, TARDIS).
 *
 * <p>The Dendrite's own leases make it safe: a write's applier, which writes the data store or teleports, runs under
 * the Exclusive lease of its interval and the Q leases of the cached results it refreshes, so a teleported write
 * refreshes them as a written-through one does; a get's query runs only on a miss, under the entry's I lease and the
 * interval's Shared lease, so no overlapping write is buffered while it applies and reads. The technique decides per
 * {@link Mode} as for documents; in normal mode a miss or write whose interval overlaps a buffered write takes the
 * technique's recovery row (Recon, with the index as the check).
 *
 * <p>One TardisDendrite per collection and range attribute at a time (the Dendrite's coordinator enforces it); its
 * writes and the per-document {@link Tardis} API must not change the same documents. Thread-safe. It is a
 * convenience: for any other setting (write-around, change records, near cache, many processes) build a {@link
 * Dendrite} with {@link Dendrite.Builder#outageTolerance}({@link TardisRanges#of}), which this one is.
 *
 * @param <K> the range attribute's type
 * @param <R> the row type
 */
public final class TardisDendrite<K extends Comparable<? super K>, R> implements Dendrite<K, R> {
  private final TardisRanges.Guard<?> guard;
  private final RangeCache<K, R> dendrite;
  private final DataStore store;
  private final String collection;
  private final String domain;
  private final Function<Entity, R> rowOf;
  private final WriteCommand<K, R, DocumentChanges> changes;
  private final Map<String, Boolean> queries;
  private final Map<String, Command<?>> commands;

  /** A write command bound by name: its argument's type, and the document changes an argument makes. */
  private record Command<C>(Class<C> type, Function<? super C, DocumentChanges> changes) {
    DocumentChanges changesOf(String name, Object argument) {
      return Objects.requireNonNull(
          changes.apply(BoundNames.argument(name, type, argument)), "the command's changes");
    }
  }

  private TardisDendrite(Builder<K, R> builder, TardisRanges ranges) {
    this.queries = Map.copyOf(builder.queries);
    this.commands = Map.copyOf(builder.commands);
    this.collection = builder.collection;
    this.domain = builder.domain;
    this.rowOf = builder.rowOf;
    this.store = builder.tardis.store;
    this.changes =
        builder.cacheUpdates == null
            ? DocumentCommand.keptAsChangeRecords()
            : DocumentCommand.updating(builder.cacheUpdates);
    // A write-through Dendrite whose data-store side is TARDIS's: it claims the range, then opens
    // the guard, which rebuilds the index of teleported range writes (only the range's owner
    // rebuilds and compacts its log).
    this.dendrite =
        Dendrite.builder(builder.type, builder.rows)
            .collection(collection)
            .domain(domain)
            .range(builder.min, builder.max)
            .cache(builder.tardis.cacheGiven())
            .writePolicy(WritePolicy.WRITE_THROUGH)
            .outageTolerance(ranges)
            .buildRangeCache();
    this.guard = ranges.openFor(collection, domain);
  }

  /**
   * Starts configuring a TardisDendrite over a range attribute of type {@code type}, whose rows {@code rows}
   * encodes in the cache.
   */
  public static <K extends Comparable<? super K>, R> Builder<K, R> builder(
      DomainType<K> type, RowCodec<K, R> rows) {
    return new Builder<>(type, rows);
  }

  /**
   * Returns the rows whose range attribute lies in [{@code lowerBound}, {@code upperBound}]: from the cache if it
   * holds them, otherwise from the data store (after applying the overlapping buffered writes, where the technique
   * does), caching the result.
   *
   * @throws TardisUnavailableException when the technique cannot serve the miss now (the data store is down, or may
   *     lack buffered writes): nothing was read or cached
   * @throws IllegalArgumentException for bad bounds, as {@link Dendrite#get}
   */
  public List<R> get(K lowerBound, K upperBound) {
    return dendrite.get(
        lowerBound,
        upperBound,
        (lo, hi) -> store.readRange(collection, domain, lo, hi).stream().map(rowOf).toList());
  }

  /**
   * Writes {@code changes}, which touch the rows of [{@code lowerBound}, {@code upperBound}] (before and after the
   * write): to the data store, or, when it fails them or the technique says so, buffered in the cache tier with
   * the interval indexed. Either way the cached results overlapping the interval are refreshed.
   * Returns once the write is durable in one or the other.
   *
   * @throws TardisOutcomeUnknownException when the data store may have applied non-idempotent changes: not
   *     acknowledged, and nothing buffered
   * @throws BufferRefusedException when pinned memory refused to buffer the write: not acknowledged; of a write to
   *     several documents, those buffered before the refusal stay buffered (as range write-back leaves them)
   * @throws IllegalArgumentException for bad bounds, or a change to a document of another collection; nothing
   *     changed
   */
  public void write(K lowerBound, K upperBound, DocumentChanges changes) {
    Objects.requireNonNull(changes, "changes");
    dendrite.write(lowerBound, upperBound, changes, this.changes);
  }

  /**
   * {@link #get(Comparable, Comparable)} under a name bound with {@link Builder#query}.
   *
   * @throws IllegalArgumentException if no query is bound under {@code query}
   */
  @Override
  public List<R> get(String query, K lowerBound, K upperBound) {
    BoundNames.lookUp(queries, "query", query, rangeName());
    return get(lowerBound, upperBound);
  }

  /**
   * {@link #write(Comparable, Comparable, DocumentChanges)} of the changes the command bound under {@code command}
   * ({@link Builder#command}) makes of {@code argument}.
   *
   * @throws IllegalArgumentException if no command is bound under {@code command} or {@code argument} is not of its
   *     type; nothing changed
   */
  @Override
  public <C> void write(String command, K lowerBound, K upperBound, C argument) {
    Command<?> bound = BoundNames.lookUp(commands, "write command", command, rangeName());
    DocumentChanges changes = bound.changesOf(command, argument);
    try {
      write(lowerBound, upperBound, changes);
    } catch (RuntimeException failure) {
      throw NotAppliedException.orOutcomeUnknown(failure);
    }
  }

  @Override
  public String rangeName() {
    return collection + "." + domain;
  }

  /** This process's mode now. */
  public Mode mode() {
    return guard.mode();
  }

  /** The technique this instance runs. */
  public Technique technique() {
    return guard.technique();
  }

  /** The state now; reads every partition (one batched read). */
  public TardisMetrics metrics() {
    return guard.metrics();
  }

  /** The underlying Dendrite's counts (hits, misses, writes). */
  public DendriteMetrics dendriteMetrics() {
    return dendrite.metrics();
  }

  /**
   * Gives the range up and stops the recovery workers; what is still buffered stays pinned, listed and indexed in
   * the cache tier, where the range's next owner finds it. The cache client and the store stay the caller's.
   */
  @Override
  public void close() {
    dendrite.close(); // closes the guard: the index, then the recovery workers
  }

  /**
   * Configures a {@link TardisDendrite}.
   *
   * @param <K> the range attribute's type
   * @param <R> the row type
   */
  public static final class Builder<K extends Comparable<? super K>, R> {
    private final DomainType<K> type;
    private final RowCodec<K, R> rows;
    private Tardis.Builder tardis;
    private String collection;
    private String domain;
    private K min;
    private K max;
    private Function<Entity, R> rowOf;
    private Function<DocumentChanges, CacheUpdate<K, R>> cacheUpdates;
    private boolean ignoringTheIndex;
    private final Map<String, Boolean> queries = new LinkedHashMap<>();
    private final Map<String, Command<?>> commands = new LinkedHashMap<>();

    private Builder(DomainType<K> type, RowCodec<K, R> rows) {
      this.type = Objects.requireNonNull(type, "type");
      this.rows = Objects.requireNonNull(rows, "rows");
    }

    /**
     * The cache, the data store, the technique and the recovery settings, as for {@link Tardis} (required). Its
     * buffered writes are listed in partitions of their own, {@code PendingWrites:tardis.<collection>.<domain>:<i>}.
     */
    public Builder<K, R> tardis(Tardis.Builder settings) {
      this.tardis = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /** The collection (table) the rows are documents of (required). */
    public Builder<K, R> collection(String name) {
      this.collection = RangeNames.check("collection", name);
      return this;
    }

    /** The range attribute: a field of every document, queried with {@code readRange} (required). */
    public Builder<K, R> domain(String name) {
      this.domain = RangeNames.check("domain", name);
      return this;
    }

    /** The attribute's domain, [min, max] (required). */
    public Builder<K, R> range(K min, K max) {
      this.min = Objects.requireNonNull(min, "min");
      this.max = Objects.requireNonNull(max, "max");
      return this;
    }

    /** How a document the data store returns becomes a row (required). */
    public Builder<K, R> rowOf(Function<Entity, R> rowOf) {
      this.rowOf = Objects.requireNonNull(rowOf, "rowOf");
      return this;
    }

    /**
     * Binds the range's documents, read from the data store and made rows by {@link #rowOf}, under {@code name}: a
     * {@link Dendrite#get get} naming it reads them. (A TARDIS range reads its documents only: it must know what a
     * miss depends on to apply the buffered writes first.)
     *
     * @throws IllegalArgumentException if {@code name} is blank or already bound
     */
    public Builder<K, R> query(String name) {
      BoundNames.bind(queries, name, Boolean.TRUE);
      return this;
    }

    /**
     * Binds a write command under {@code name}: a {@link Dendrite#write write} naming it writes the document changes
     * {@code changes} makes of its argument, which must be a {@code type}.
     *
     * @throws IllegalArgumentException if {@code name} is blank or already bound
     */
    public <C> Builder<K, R> command(
        String name, Class<C> type, Function<? super C, DocumentChanges> changes) {
      BoundNames.bind(
          commands,
          name,
          new Command<>(
              Objects.requireNonNull(type, "type"), Objects.requireNonNull(changes, "changes")));
      return this;
    }

    /**
     * How a write changes a cached result set (required for write-through, unless the Dendrite keeps writes as
     * change records: {@link Dendrite.Builder#changeRecords}).
     */
    public Builder<K, R> cacheUpdates(Function<DocumentChanges, CacheUpdate<K, R>> updates) {
      this.cacheUpdates = Objects.requireNonNull(updates, "updates");
      return this;
    }

    /**
     * Misses and writes never find buffered writes overlapping their intervals: recovery-mode misses query a data
     * store that may lack them. For the negative control of the tests only (it reads stale), so not public.
     */
    Builder<K, R> ignoringTheIndex() {
      this.ignoringTheIndex = true;
      return this;
    }

    /**
     * Rebuilds the index of buffered range writes from the cache tier, builds the Dendrite (claiming the range) and
     * starts the recovery workers.
     *
     * @throws IllegalStateException when a required setting is missing, when the settings are for stock memcached,
     *     or as {@link Tardis.Builder#build}
     */
    public TardisDendrite<K, R> build() {
      if (tardis == null || collection == null || domain == null || min == null || rowOf == null) {
        throw new IllegalStateException("tardis, collection, domain, range and rowOf are required");
      }
      TardisRanges ranges = TardisRanges.of(tardis);
      if (ignoringTheIndex) {
        ranges.ignoringTheIndex();
      }
      return new TardisDendrite<>(this, ranges);
    }
  }
}
