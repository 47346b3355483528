package io.dendrite.writeback.document;

import io.dendrite.core.Coordinator;
import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import io.dendrite.core.LocalCoordinator;
import io.dendrite.core.RangeNames;
import io.dendrite.core.WriteBuffer;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedIntervals;
import io.dendrite.writeback.kernel.DocumentEngine;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Range write-back (the CPR paper's BuWrInT, §3.2) for a {@link io.dendrite.core.WritePolicy#WRITE_BACK} Dendrite:
 * each write's changes are buffered per document by a {@link DocumentWriteBack} engine, and the write's interval is indexed
 * with the documents it touched, so that a range get that misses applies every buffered write overlapping its
 * interval (updates, inserts and deletes alike) before it queries. A range result therefore never misses a
 * buffered row.
 *
 * <pre>{@code
 * DocumentCommand<Long, Row> save = DocumentCommand.updating(changes -> cacheUpdateOf(changes));
 * RangeWriteBack<Long> buffer = RangeWriteBack.builder(DomainType.LONG)
 *     .writeBack(engine).collection("t").domain("id").build();
 * RangeCache<Long, Row> dendrite = Dendrite.builder(DomainType.LONG, codec).collection("t").domain("id")
 *     .cache(iqClient).writeBack(buffer, List.of(save)).build();
 * dendrite.write(7L, 7L, new EntityChanges(new EntityKey("t", 7L), ChangeSequence.of(Change.set("v", 1))), save);
 * }</pre>
 *
 * <p>Order: writes of one document are kept in order by the engine (one buffered write per document, compacted).
 * Overlapping writes were serialized by the Dendrite's Exclusive interval leases; a miss applies the overlapping
 * entries oldest first, and since each document's changes reach the data store in their serial order, and changes
 * to different documents commute, the store then holds the same rows as after applying the writes in serial order.
 *
 * <p>Every index change is logged (in the cache tier, pinned and replicated like the buffered writes), and
 * {@link Builder#build()} rebuilds the index from the log, so a process taking the range over finds every buffered
 * write's interval. One RangeWriteBack per collection and domain at a time (the Dendrite's coordinator enforces
 * it): building one compacts the log it takes over. A write's log record and its buffered writes go out together,
 * so a process that dies between them can leave a buffered write no record names: building also reads the engine's
 * pending-writes listings, and every miss applies the documents of this collection listed there but named by no
 * record first, until one has.
 *
 * <p>Entries whose documents the engine's drain threads applied leave the index in the background.
 *
 * <p>The index itself is the engine kernel's ({@code io.dendrite.writeback.kernel.BufferedIntervals}), which TARDIS
 * keeps over its own buffered writes too; this class is it over a {@link DocumentWriteBack}, whose engine it reaches
 * through this package, not through anything public.
 *
 * <p>Thread-safe. {@link #close()} stops its background thread and logs the queued removals; the engine and the
 * cache client stay the caller's.
 *
 * @param <K> the type of the range attribute
 */
public final class RangeWriteBack<K extends Comparable<? super K>>
    implements WriteBuffer<K, DocumentChanges>, AutoCloseable {
  private final BufferedIntervals<K> intervals;

  private RangeWriteBack(BufferedIntervals<K> intervals) {
    this.intervals = intervals;
  }

  /** Starts configuring range write-back for an attribute of type {@code type}. */
  public static <K extends Comparable<? super K>> Builder<K> builder(DomainType<K> type) {
    return new Builder<>(type);
  }

  /**
   * Refuses a change to a document of another collection than this range write-back's; on an engine owned by a
   * range, also a change to a document whose range attribute lies outside the write's interval, since another
   * range's engine could then lock the same document in another process.
   *
   * @throws IllegalArgumentException naming the document
   */
  @Override
  public void check(Interval<K> interval, DocumentChanges change) {
    intervals.check(interval, change);
  }

  /**
   * Logs the write's interval and indexes it, then buffers each document's changes with the engine. When pinned
   * memory refuses the log record, the write goes through instead: buffered and at once drained, document by
   * document, before the Dendrite releases the interval's Exclusive lease.
   */
  @Override
  public void buffer(Interval<K> interval, DocumentChanges change) {
    intervals.buffer(interval, change);
  }

  /**
   * {@link #buffer} in steps: the log record's append and the reads of the documents' buffered writes go out at
   * once here (the documents locked), their buffered writes and listings at once in {@code store}.
   */
  @Override
  public Started start(Interval<K> interval, DocumentChanges change) {
    return intervals.start(interval, change);
  }

  /**
   * Applies the buffered writes of every entry overlapping {@code interval} (and of the documents no entry names),
   * oldest entry first, so that the miss that follows reads them all.
   */
  @Override
  public void applyOverlapping(Interval<K> interval) {
    intervals.applyOverlapping(interval);
  }

  /**
   * Whether a buffered write overlaps {@code interval} now: a document of an overlapping entry, or one no entry
   * names, still has a buffered write (one batched, lock-free read). Under the interval's Shared or Exclusive lease
   * the answer can only turn from true to false meanwhile, as buffered writes are applied.
   */
  public boolean buffersOverlapping(Interval<K> interval) {
    return intervals.buffersOverlapping(interval);
  }

  /** The number of entries in BuWrInT: writes whose buffered changes may not have reached the data store yet. */
  public int bufferedEntries() {
    return intervals.bufferedEntries();
  }

  /**
   * The range's claim this took when it was built, for the Dendrite over it (which then claims nothing more): empty
   * for an engine owned by a range, whose ownership its coordinator granted.
   *
   * @throws IllegalStateException when the Dendrite is of another range than this
   */
  @Override
  public Optional<Coordinator.RangeClaim> rangeClaim(String collection, String domain) {
    return intervals.rangeClaim(collection, domain);
  }

  /**
   * Stops the background pass and logs the queued removals. Closes the engine only if it is owned by a range (it
   * serves this range alone); never the cache client.
   */
  @Override
  public void close() {
    intervals.close();
  }

  /** Test-only: rewrites the log to the entries in force now, as the background pass does now and then. */
  void compact() {
    intervals.compact();
  }

  /**
   * Configures a {@link RangeWriteBack}.
   *
   * @param <K> the type of the range attribute
   */
  public static final class Builder<K extends Comparable<? super K>> {
    private final DomainType<K> type;
    private DocumentEngine engine;
    private String collection;
    private String domain;
    private int logPartitions;
    private int logBatch;
    private long compactAfterRecords;
    private Duration reapInterval;
    private boolean applyOnMiss;
    private Function<EntityKey, K> documentAttribute;
    private boolean claimsTheRange = true;
    private Duration claimLifetime = Duration.ofSeconds(10);

    private Builder(DomainType<K> type) {
      this.type = Objects.requireNonNull(type, "type");
      BufferedIntervals.Settings<K> defaults = BufferedIntervals.Settings.of(type, null, null);
      this.logPartitions = defaults.logPartitions();
      this.logBatch = defaults.logBatch();
      this.compactAfterRecords = defaults.compactAfterRecords();
      this.reapInterval = defaults.reapInterval();
      this.applyOnMiss = defaults.applyOnMiss();
    }

    /**
     * The Design 1 engine that buffers, replicates, drains and converts each document's changes; its replica count
     * R is also the log's. Required.
     */
    public Builder<K> writeBack(DocumentWriteBack writeBack) {
      this.engine = Objects.requireNonNull(writeBack, "writeBack").engine();
      return this;
    }

    /** The Dendrite's collection (table); every buffered change must be to one of its documents. Required. */
    public Builder<K> collection(String name) {
      this.collection = RangeNames.check("collection", name);
      return this;
    }

    /** The Dendrite's range attribute. Required. */
    public Builder<K> domain(String name) {
      this.domain = RangeNames.check("domain", name);
      return this;
    }

    /**
     * Log partition keys (default 16): indexed records are spread over them by LSN, so concurrent writers append to
     * different keys; rebuilding reads each partition's R replicas.
     */
    public Builder<K> logPartitions(int partitions) {
      if (partitions < 1) {
        throw new IllegalArgumentException("logPartitions must be at least 1, got " + partitions);
      }
      this.logPartitions = partitions;
      return this;
    }

    /** How many removal records to batch into one append (α, default 16); a lost batch only costs no-op drains. */
    public Builder<K> logBatch(int alpha) {
      if (alpha < 1) {
        throw new IllegalArgumentException("logBatch (alpha) must be at least 1, got " + alpha);
      }
      this.logBatch = alpha;
      return this;
    }

    /**
     * After how many appended records the background pass rewrites the log to the entries in force (default 4096).
     * Writers wait during a rewrite (one pinned set per partition and replica), so lower means a smaller log and
     * more frequent pauses.
     */
    public Builder<K> compactAfterRecords(long records) {
      if (records < 1) {
        throw new IllegalArgumentException(
            "compactAfterRecords must be at least 1, got " + records);
      }
      this.compactAfterRecords = records;
      return this;
    }

    /**
     * How often the background pass looks for entries the engine's drain threads applied (default 100 ms); each
     * pass reads the buffered-write keys of every indexed document in one batched read.
     */
    public Builder<K> reapInterval(Duration interval) {
      if (interval == null || interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException("reapInterval must be positive, got " + interval);
      }
      this.reapInterval = interval;
      return this;
    }

    /**
     * The range attribute's value of each document, a function of its key alone (e.g. the key itself, or a number
     * it encodes). Required when the engine is owned by a range ({@code DocumentWriteBack.Builder#ownedRange}), which locks
     * the range's documents in this process: each write is then checked to change only documents inside its
     * interval, so no document is written through two ranges' engines.
     */
    public Builder<K> documentAttribute(Function<EntityKey, K> attribute) {
      this.documentAttribute = Objects.requireNonNull(attribute, "attribute");
      return this;
    }

    /**
     * How long the range's claim outlives this process when it stops without closing (default 10 s, at least 2 s): how
     * long the next owner of the range waits after a crash. The claim is taken when the engine is not owned by a range
     * ({@code DocumentWriteBack.Builder#ownedRange}, whose coordinator grants ownership instead); the Dendrite over this holds
     * it from then on, as {@code LocalCoordinator} would have.
     */
    public Builder<K> claimLifetime(Duration lifetime) {
      Objects.requireNonNull(lifetime, "lifetime");
      if (lifetime.toSeconds() < 2) {
        throw new IllegalArgumentException("claimLifetime must be at least 2 s, got " + lifetime);
      }
      this.claimLifetime = lifetime;
      return this;
    }

    /**
     * Test-only: takes no claim on the range, as before the ownership guard, so that the Dendrite over it claims the
     * range from its own coordinator.
     */
    Builder<K> withoutRangeClaimForTesting() {
      this.claimsTheRange = false;
      return this;
    }

    /** Test-only: a miss applies nothing first, to show that the consistency checker catches what that breaks. */
    Builder<K> withoutApplyOnMissForTesting() {
      this.applyOnMiss = false;
      return this;
    }

    /**
     * Rebuilds BuWrInT from the log in the cache and compacts the log, then starts the background pass.
     *
     * @throws IllegalStateException when a required setting is missing
     */
    public RangeWriteBack<K> build() {
      if (engine == null || collection == null || domain == null) {
        throw new IllegalStateException("writeBack, collection and domain are required");
      }
      var owned = engine.ownedRange();
      if (owned.isPresent() != (documentAttribute != null)) {
        throw new IllegalStateException(
            owned.isPresent()
                ? "an engine owned by a range needs documentAttribute: its writes are checked to stay in the range"
                : "documentAttribute is for an engine owned by a range (DocumentWriteBack.Builder#ownedRange)");
      }
      if (owned.isPresent()
          && !(owned.get().collection().equals(collection)
              && owned.get().domain().equals(domain))) {
        throw new IllegalStateException(
            "the engine is owned by range "
                + owned.get().collection()
                + "."
                + owned.get().domain()
                + ", not by "
                + collection
                + "."
                + domain);
      }
      // Claimed before anything of the range is read: a second range write-back beside the range's
      // owner, in this
      // process or another, would rebuild and compact the log its owner is appending to.
      Coordinator.RangeClaim claim =
          owned.isEmpty() && claimsTheRange
              ? closeOnce(
                  new LocalCoordinator(claimLifetime).claim(collection, domain, engine.cache()))
              : null;
      try {
        return new RangeWriteBack<>(
            new BufferedIntervals<>(
                engine,
                new BufferedIntervals.Settings<>(
                    type,
                    collection,
                    domain,
                    logPartitions,
                    logBatch,
                    compactAfterRecords,
                    reapInterval,
                    applyOnMiss,
                    documentAttribute),
                claim));
      } catch (RuntimeException failed) {
        if (claim != null) {
          claim.close();
        }
        if (owned.isPresent()) {
          // It serves this range alone: nobody else would close it.
          engine.close();
        }
        throw failed;
      }
    }

    /**
     * The claim, closed once however often it is closed: the Dendrite over this and this range write-back both close
     * it, and a second close must not delete a record a successor holds by then.
     */
    private static Coordinator.RangeClaim closeOnce(Coordinator.RangeClaim claim) {
      AtomicBoolean closed = new AtomicBoolean();
      return new Coordinator.RangeClaim() {
        @Override
        public void check() {
          claim.check();
        }

        @Override
        public boolean excludesOtherOwners() {
          return claim.excludesOtherOwners();
        }

        @Override
        public boolean mayKeepResultsInMemory() {
          return claim.mayKeepResultsInMemory();
        }

        @Override
        public void close() {
          if (closed.compareAndSet(false, true)) {
            claim.close();
          }
        }
      };
    }
  }
}
