package io.dendrite.tardis;

import io.dendrite.core.DataStoreException;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import io.dendrite.core.OutageTolerance;
import io.dendrite.core.OwnedRange;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.kernel.BufferedIntervals;
import io.dendrite.writeback.kernel.LeaseLostException;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;

/**
 * TARDIS for a {@link Dendrite}'s range results ({@link Dendrite.Builder#outageTolerance}): a write-through (or
 * write-around) Dendrite whose writes go to the data store while it answers and are teleported into the cache tier
 * while it does not, and whose misses apply the teleported writes their interval overlaps before they query (or are
 * refused while the data store cannot give a current result), as the technique decides per {@link Mode}.
 *
 * <pre>{@code
 * Dendrite<Long, Order> orders = Dendrite.builder(DomainType.LONG, orderCodec)
 *     .collection("orders").domain("order_id").cache(cache)
 *     .writePolicy(WritePolicy.WRITE_THROUGH)
 *     .outageTolerance(TardisRanges.of(Tardis.builder().cache(cache).store(store).technique(Technique.TARDIS)))
 *     .query("byId", (lo, hi) -> decode(store.readRange("orders", "order_id", lo, hi)))
 *     .command("save", DocumentCommand.updating(changes -> cacheUpdateOf(changes)))
 *     .build();
 * }</pre>
 *
 * <p>A teleported write is buffered per document (as {@link Tardis} buffers one) and its interval is indexed with its
 * documents (the CPR paper's BuWrInT, kept by the write-back kernel's {@code BufferedIntervals} over the teleported writes): the thesis'
 * mapping from cached entries to the buffered writes they depend on (Table 4.2). The Dendrite's leases make it safe:
 * a write's data-store statement or teleport runs under the Exclusive lease of its interval and the Q leases of the
 * cached results it refreshes; a miss's query runs under the interval's Shared lease, so no overlapping write is
 * teleported while it applies and reads.
 *
 * <p>Writes are document changes ({@code DocumentCommand}s of the write-back module); queries should read the data
 * store through its {@code DataStore} (so that a failed read tells TARDIS the store is down). One Dendrite per
 * collection and range attribute at a time (its coordinator enforces it), in one process or, with {@code
 * ManyProcesses}, each range in the process that owns it (fenced: see {@link #open(DomainType, OwnedRange,
 * IqClient)}); its writes and the
 * per-document {@link Tardis} API must not change the same documents.
 */
public final class TardisRanges implements OutageTolerance<DocumentChanges> {
  private final Tardis.Builder settings;
  private boolean useTheIndex = true;

  /** The guards open now, by range ({@code <collection>.<domain>}). */
  private final Map<String, Guard<?>> open = new ConcurrentHashMap<>();

  private TardisRanges(Tardis.Builder settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  /**
   * TARDIS with {@code settings}: the cache (the Dendrite's), the data store, the technique and the recovery settings,
   * as for {@link Tardis}. A range's teleported writes are listed in partitions of their own, {@code
   * PendingWrites:tardis.<collection>.<domain>:<i>}.
   *
   * @throws IllegalStateException for settings a range cannot use: stock memcached (no I/Q leases), or a {@link
   *     Solution} other than RECON (the range's index is its check)
   */
  public static TardisRanges of(Tardis.Builder settings) {
    if (settings.solution != Solution.RECON) {
      throw new IllegalStateException(
          "TARDIS for ranges finds buffered writes through its index of their intervals: Solution "
              + settings.solution
              + " is for the per-document Tardis");
    }
    if (settings.lockTtl != null) {
      throw new IllegalStateException(
          "TARDIS for ranges needs I/Q leases, which stock memcached lacks: use our IQ servers (not"
              + " Tardis.Builder.stockMemcached)");
    }
    return new TardisRanges(settings);
  }

  /**
   * Misses and writes never find teleported writes overlapping their intervals: recovery-mode misses query a data
   * store that may lack them. For the negative control of the tests only (it reads stale), so not public.
   */
  TardisRanges ignoringTheIndex() {
    this.useTheIndex = false;
    return this;
  }

  @Override
  public Class<DocumentChanges> changeType() {
    return DocumentChanges.class;
  }

  /**
   * Starts the range's recovery workers and rebuilds its index of teleported writes from the cache tier (the
   * Dendrite claimed the range first: only its owner rebuilds and compacts the index's log).
   *
   * @throws IllegalStateException when the settings' cache is not the Dendrite's, or as {@link Tardis.Builder#build}
   */
  @Override
  public <K extends Comparable<? super K>> Guard<K> open(
      DomainType<K> type, String collection, String domain, IqClient cache) {
    return open(type, collection, domain, domain, cache, null);
  }

  /**
   * {@link #open(DomainType, String, String, IqClient)} for a range a process owns among many: the range's teleported
   * writes are listed, indexed and recovered as the range's own ({@code PendingWrites:tardis.<collection>.<range
   * domain>:<i>}), its data-store statements (writes and recovery alike) carry the ownership's fence token, and its
   * recovery workers run fenced at the ownership's epoch and stop once the range is lost. A takeover's new owner
   * finds what the former owner teleported: its misses apply what they overlap first, and its workers recover it.
   */
  @Override
  public <K extends Comparable<? super K>> Guard<K> open(
      DomainType<K> type, OwnedRange range, IqClient cache) {
    return open(type, range.collection(), range.domain(), range.attribute(), cache, range);
  }

  private <K extends Comparable<? super K>> Guard<K> open(
      DomainType<K> type,
      String collection,
      String domain,
      String attribute,
      IqClient cache,
      OwnedRange owner) {
    if (settings.cacheGiven() != cache) {
      throw new IllegalStateException(
          "TARDIS keeps its teleported writes in the Dendrite's cache tier: give Tardis.Builder.cache the"
              + " Dendrite's IqClient");
    }
    Guard<K> guard =
        new Guard<>(
            type,
            collection,
            domain,
            attribute,
            settings.buildCore("tardis." + collection + "." + domain, owner));
    open.put(collection + "." + domain, guard);
    return guard;
  }

  /**
   * The TARDIS state now of each range open here, by range ({@code <collection>.<domain>}; one in one process, the
   * ranges this process owns over many): its mode, its teleported writes and what was absorbed and recovered since
   * it opened. Reads each range's partitions (one batched read per range).
   */
  public Map<String, TardisMetrics> metrics() {
    Map<String, TardisMetrics> now = new TreeMap<>();
    open.forEach((range, guard) -> now.put(range, guard.metrics()));
    return now;
  }

  /**
   * The ranges open here ({@link #metrics()}) as one: counts added, the oldest listing the oldest of theirs, and the
   * mode the worst of theirs (failed, then recovery, then normal); normal with zero counts while none is open.
   */
  public TardisMetrics total() {
    Collection<TardisMetrics> ranges = metrics().values();
    Mode mode =
        ranges.stream().map(TardisMetrics::mode).anyMatch(Mode.FAILED::equals)
            ? Mode.FAILED
            : ranges.stream().map(TardisMetrics::mode).anyMatch(Mode.RECOVERY::equals)
                ? Mode.RECOVERY
                : Mode.NORMAL;
    return new TardisMetrics(
        settings.technique,
        mode,
        ranges.stream().mapToLong(TardisMetrics::modeTransitions).sum(),
        ranges.stream().mapToInt(TardisMetrics::bufferedDocuments).sum(),
        ranges.stream()
            .map(TardisMetrics::oldestBuffered)
            .flatMap(Optional::stream)
            .min(Instant::compareTo),
        ranges.stream().mapToLong(TardisMetrics::failedWritesAbsorbed).sum(),
        ranges.stream().mapToLong(TardisMetrics::recovered).sum(),
        ranges.stream().mapToLong(TardisMetrics::recoveredByForeground).sum(),
        ranges.stream().mapToLong(TardisMetrics::unavailableMisses).sum(),
        ranges.stream().mapToLong(TardisMetrics::outcomeUnknown).sum(),
        ranges.stream().mapToLong(TardisMetrics::teleportsRefused).sum(),
        ranges.stream().mapToLong(TardisMetrics::pinnedBytes).sum());
  }

  /** The technique every range runs. */
  Technique technique() {
    return settings.technique;
  }

  /** The guard of the range {@code collection}.{@code domain} open now: a {@link TardisDendrite}'s own. */
  Guard<?> openFor(String collection, String domain) {
    return open.get(collection + "." + domain);
  }

  /**
   * One range's TARDIS: its technique and mode, the recovery workers, and the index of its teleported writes.
   *
   * @param <K> the range attribute's type
   */
  final class Guard<K extends Comparable<? super K>>
      implements OutageTolerance.RangeGuard<K, DocumentChanges> {
    private final TardisCore core;
    private final BufferedIntervals<K> index;
    private final String collection;
    private final String domain;

    /** The range attribute as the data store names it (the domain, but for a range among many). */
    private final String attribute;

    private Guard(
        DomainType<K> type, String collection, String domain, String attribute, TardisCore core) {
      this.core = core;
      this.collection = collection;
      this.domain = domain;
      this.attribute = attribute;
      try {
        this.index =
            new BufferedIntervals<>(
                core.teleported.asEngine(core.replicaRepair),
                BufferedIntervals.Settings.of(type, collection, domain),
                null); // the Dendrite claimed the range
      } catch (RuntimeException failed) {
        core.close();
        throw failed;
      }
    }

    /**
     * Refuses a change to a document of another collection than the range's, before anything changes.
     *
     * @throws IllegalArgumentException naming the document
     */
    @Override
    public void check(Interval<K> interval, DocumentChanges change) {
      for (EntityChanges one : change.each()) {
        if (!one.key().collection().equals(collection)) {
          throw new IllegalArgumentException(
              "TARDIS for the range " + collection + "." + domain + " cannot write " + one.key());
        }
      }
    }

    /**
     * To the data store, or, when it fails the write or the technique says so, teleported into the cache tier with
     * its interval indexed.
     *
     * @throws TardisOutcomeUnknownException when the data store may have applied non-idempotent changes: not
     *     acknowledged, and nothing buffered
     * @throws BufferRefusedException when pinned memory refused to buffer the write: not acknowledged; of a write
     *     to several documents, those buffered before the refusal stay buffered (as range write-back leaves them)
     */
    @Override
    public void write(Interval<K> interval, DocumentChanges change) {
      core.write(
          subject(interval),
          change.each(),
          () -> LeaseLostException.untilKept(() -> index.buffer(interval, change)));
    }

    /**
     * @throws TardisUnavailableException when the technique cannot serve the miss now (the data store is down, or
     *     may lack teleported writes): nothing was read or cached
     */
    @Override
    public <T> T miss(Interval<K> interval, Callable<T> query) {
      return core.miss(
          subject(interval),
          () -> {
            try {
              return query.call();
            } catch (RuntimeException failed) {
              throw failed;
            } catch (Exception failed) {
              throw new DataStoreException(
                  "the query of " + collection + "." + domain + " " + interval + " failed", failed);
            }
          });
    }

    /** Stops the recovery workers; what is teleported stays pinned, listed and indexed for the next owner. */
    @Override
    public void close() {
      open.remove(collection + "." + domain, this);
      try (TardisCore recovery = core;
          BufferedIntervals<K> indexed = index) {
        // closed in reverse order: the index, then the recovery workers
      }
    }

    /** This process's mode now. */
    Mode mode() {
      return core.mode();
    }

    /** The technique this range runs. */
    Technique technique() {
      return core.technique;
    }

    /** The state now; reads every partition (one batched read). */
    TardisMetrics metrics() {
      return core.metrics();
    }

    /** A get's or write's interval: it depends on the teleported writes whose intervals overlap it. */
    private TardisCore.Subject subject(Interval<K> interval) {
      return new TardisCore.Subject() {
        @Override
        public String describe() {
          return collection + "." + domain + " " + interval;
        }

        @Override
        public boolean hasBuffered() {
          return useTheIndex && index.buffersOverlapping(interval);
        }

        @Override
        public boolean applyBuffered() {
          if (!hasBuffered()) {
            return false;
          }
          index.applyOverlapping(interval);
          return true;
        }

        @Override
        public void probe() {
          core.store.readRange(collection, attribute, interval.lo(), interval.lo());
        }
      };
    }
  }
}
