package io.dendrite.writeback.range;

import io.dendrite.core.Coordinator;
import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import io.dendrite.core.LocalCoordinator;
import io.dendrite.core.RangeNames;
import io.dendrite.core.WriteBuffer;
import io.dendrite.core.interval.BufferedWriteIndex;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.kernel.BufferedWrites;
import io.dendrite.writeback.kernel.DocumentEngine;
import io.dendrite.writeback.kernel.PinnedReplicas;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>Every index change is logged ({@link BufferedIntervalLog}, pinned and replicated like the buffered writes), and
 * {@link Builder#build()} rebuilds the index from the log, so a process taking the range over finds every buffered
 * write's interval. One RangeWriteBack per collection and domain at a time (the Dendrite's coordinator enforces
 * it): building one compacts the log it takes over. A write's log record and its buffered writes go out together,
 * so a process that dies between them can leave a buffered write no record names: building also reads the engine's
 * pending-writes listings, and every miss applies the documents of this collection listed there but named by no
 * record first, until one has.
 *
 * <p>Entries whose documents the engine's drain threads applied leave the index through a background pass that
 * removes an entry only if it was fully buffered <em>before</em> it saw none of its documents still buffered: a
 * buffered write is deleted only after what it held was applied, so that proves the entry's writes reached the
 * store, whatever was written to the documents since.
 *
 * <p>Thread-safe. {@link #close()} stops its background thread and logs the queued removals; the engine and the
 * cache client stay the caller's.
 *
 * @param <K> the type of the range attribute
 */
public final class RangeWriteBack<K extends Comparable<? super K>>
    implements WriteBuffer<K, DocumentChanges>, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RangeWriteBack.class);

  private final DomainType<K> type;
  private final DocumentEngine engine;
  private final String collection;
  private final BufferedIntervalLog intervalLog;
  private final BufferedWriteIndex<K, IndexedWrite> index = new BufferedWriteIndex<>();

  /** Appending an indexed record and its entry is shared; compacting the log is exclusive of it. */
  private final ReadWriteLock logLock = new ReentrantReadWriteLock();

  private final long compactAfterRecords;
  private final boolean applyOnMiss;

  /** The range attribute of each document, for an engine owned by a range; null otherwise. */
  private final Function<EntityKey, K> documentAttribute;

  private final ScheduledExecutorService background;
  private final IntSupplier restoreLog = this::restoreLog;

  /**
   * Documents of this collection listed as buffered when this was built, yet named by no log record: the last
   * owner died between sending a buffered write and its log record's reply (they go out together), or the write
   * came through the engine's per-document API. Their attribute values are unknown, so every miss applies them
   * first, until one has.
   */
  private final Set<EntityKey> unindexed = ConcurrentHashMap.newKeySet();

  private volatile boolean closed;

  /** The range's ownership claim, when this took one (an engine not owned by a range); null otherwise. */
  private final Coordinator.RangeClaim claim;

  private final String domain;

  /** An indexed write: its log record, its documents, and whether buffering them has returned. */
  private static final class IndexedWrite {
    final BufferedIntervalRecord record;
    final List<EntityKey> documents;
    volatile boolean settled;

    IndexedWrite(BufferedIntervalRecord record, List<EntityKey> documents, boolean settled) {
      this.record = record;
      this.documents = documents;
      this.settled = settled;
    }
  }

  private RangeWriteBack(Builder<K> builder, Coordinator.RangeClaim claim) {
    this.claim = claim;
    this.domain = builder.domain;
    this.type = builder.type;
    this.engine = builder.engine;
    this.collection = builder.collection;
    this.compactAfterRecords = builder.compactAfterRecords;
    this.applyOnMiss = builder.applyOnMiss;
    this.documentAttribute = builder.documentAttribute;
    this.intervalLog =
        new BufferedIntervalLog(
            engine.cache(),
            builder.collection,
            builder.domain,
            builder.logPartitions,
            engine.replicas(),
            builder.logBatch);
    for (BufferedIntervalRecord record : intervalLog.readLive()) {
      Interval<K> interval;
      List<EntityKey> documents;
      try {
        interval = Interval.of(type.parse(record.lowerBound()), type.parse(record.upperBound()));
        documents = record.bufferedWriteKeys().stream().map(BufferedWriteKey::parse).toList();
      } catch (IllegalArgumentException notOurs) {
        // A line no engine wrote (another client's, or damage): failing here would keep every
        // later owner of the range from starting, and from draining what it buffered.
        log.warn(
            "skipping log record {} of {}: {}", record.toLine(), collection, notOurs.getMessage());
        continue;
      }
      // Whatever was being buffered when the log's last owner stopped has stopped: every entry is
      // settled.
      index.append(interval, new IndexedWrite(record, documents, true));
    }
    Set<EntityKey> named =
        index.entries().stream()
            .flatMap(entry -> entry.write().documents.stream())
            .collect(Collectors.toSet());
    engine.listedDocuments().stream()
        .filter(key -> key.collection().equals(collection) && !named.contains(key))
        .forEach(unindexed::add);
    compact();
    this.background =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread =
                  new Thread(task, "range-writeback-" + builder.collection + "-" + builder.domain);
              thread.setDaemon(true);
              return thread;
            });
    long every = builder.reapInterval.toNanos();
    background.scheduleWithFixedDelay(
        () -> {
          try (FenceScope fenced = engine.fenced()) {
            backgroundPass();
          }
        },
        every,
        every,
        TimeUnit.NANOSECONDS);
    engine.replicaRepair().register(restoreLog);
  }

  /** Starts configuring range write-back for an attribute of type {@code type}. */
  public static <K extends Comparable<? super K>> Builder<K> builder(DomainType<K> type) {
    return new Builder<>(type);
  }

  /**
   * Starts configuring range write-back over an engine other than a {@link DocumentWriteBack}: for the modules the engine's
   * package is exported to (TARDIS indexes the range writes it buffers while the data store is down).
   */
  public static <K extends Comparable<? super K>> Builder<K> over(
      DomainType<K> type, DocumentEngine engine) {
    Builder<K> builder = new Builder<>(type);
    builder.engine = Objects.requireNonNull(engine, "engine");
    // Its caller owns the range already (TARDIS's Dendrite claims it before building the index).
    builder.claimsTheRange = false;
    return builder;
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
    List<EntityChanges> changes = changesOf(change);
    if (documentAttribute == null) {
      return;
    }
    for (EntityChanges one : changes) {
      K attribute = documentAttribute.apply(one.key());
      if (attribute == null || !interval.contains(Interval.point(attribute))) {
        throw new IllegalArgumentException(
            "document "
                + one.key()
                + " has range attribute "
                + attribute
                + ", outside the write's interval "
                + interval
                + ": a range-owned write-back engine locks documents in this process, so each write may"
                + " only change documents of its own interval");
      }
    }
  }

  /**
   * Logs the write's interval and indexes it, then buffers each document's changes with the engine. When pinned
   * memory refuses the log record, the write goes through instead: buffered and at once drained, document by
   * document, before the Dendrite releases the interval's Exclusive lease.
   */
  @Override
  public void buffer(Interval<K> interval, DocumentChanges change) {
    start(interval, change).store().await();
  }

  /**
   * {@link #buffer} in steps: the log record's append and the reads of the documents' buffered writes go out at
   * once here (the documents locked), their buffered writes and listings at once in {@code store}.
   */
  @Override
  public Started start(Interval<K> interval, DocumentChanges change) {
    List<EntityChanges> changes = changesOf(change);
    Map<EntityKey, ChangeSequence> byDocument = new LinkedHashMap<>();
    changes.forEach(one -> byDocument.merge(one.key(), one.changes(), ChangeSequence::then));
    List<EntityKey> documents = List.copyOf(byDocument.keySet());
    logLock.readLock().lock();
    BufferedIntervalRecord record;
    PinnedReplicas.Sent<Boolean> logging;
    BufferedWrites.StartedWrite writing;
    try {
      record =
          BufferedIntervalRecord.indexed(
              intervalLog.nextLsn(),
              type.format(interval.lo()),
              type.format(interval.hi()),
              documents.stream().map(BufferedWriteKey::of).toList());
      logging = intervalLog.appendIndexedAsync(record);
      writing = engine.startWrite(byDocument);
    } catch (RuntimeException failed) {
      logLock.readLock().unlock();
      throw failed;
    }
    return new Started() {
      private boolean logAwaited;
      private IndexedWrite write;

      /** Indexes the write once its record is logged (false: pinned memory refused it); ends the log's lock. */
      private void awaitLog(boolean settled) {
        if (logAwaited) {
          return;
        }
        logAwaited = true;
        try {
          if (logging.await()) {
            write = new IndexedWrite(record, documents, settled);
            index.append(interval, write);
          }
        } finally {
          logLock.readLock().unlock();
        }
      }

      /**
       * Sends the buffered writes without waiting for the log record's reply, so that both can go out in one round
       * trip: a process that dies between them may leave a buffered write no log record names, which the next
       * owner finds listed and applies before its first miss ({@link #applyOverlapping}).
       */
      @Override
      public Stored store() {
        try {
          writing.store();
        } catch (RuntimeException failed) {
          try {
            awaitLog(false);
          } catch (RuntimeException alsoFailed) {
            failed.addSuppressed(alsoFailed);
          }
          settle();
          throw failed;
        }
        return () -> {
          RuntimeException failure = null;
          try {
            awaitLog(false);
          } catch (RuntimeException failed) {
            failure =
                failed; // unindexed, then: settle() drains the documents before the write returns
          }
          try {
            writing.await();
          } catch (RuntimeException failed) {
            if (failure == null) {
              failure = failed;
            } else {
              failure.addSuppressed(failed);
            }
          } finally {
            settle();
          }
          if (failure != null) {
            throw failure;
          }
        };
      }

      @Override
      public void abandon() {
        try {
          awaitLog(true);
        } finally {
          writing.abandon();
        }
      }

      private void settle() {
        if (write == null) {
          // Unindexed, a buffered write would be invisible to range misses: it must not outlive the
          // Exclusive lease. If the store fails the drain, every miss applies the documents first.
          try {
            engine.drainAll(documents);
          } catch (RuntimeException notDrained) {
            unindexed.addAll(documents);
            throw notDrained;
          }
        } else {
          // Also when buffering failed: the entry stays until its documents have nothing buffered.
          write.settled = true;
        }
      }
    };
  }

  /**
   * Drains the documents of every entry overlapping {@code interval}, oldest entry first, and removes the entries
   * that were settled before their documents were drained (all of them, under the get's Shared lease).
   */
  @Override
  public void applyOverlapping(Interval<K> interval) {
    if (!applyOnMiss) {
      return;
    }
    List<BufferedWriteIndex.Entry<K, IndexedWrite>> overlapping = index.overlapping(interval);
    List<Boolean> settled = overlapping.stream().map(entry -> entry.write().settled).toList();
    List<EntityKey> unnamed = List.copyOf(unindexed);
    // One batched drain: documents' changes commute, and each document's reach the store in their
    // serial order.
    engine.drainAll(
        Stream.concat(
                unnamed.stream(),
                overlapping.stream().flatMap(entry -> entry.write().documents.stream()))
            .distinct()
            .toList());
    unnamed.forEach(unindexed::remove);
    for (int i = 0; i < overlapping.size(); i++) {
      if (settled.get(i)) {
        remove(overlapping.get(i));
      }
    }
  }

  /**
   * Whether a buffered write overlaps {@code interval} now: a document of an overlapping entry, or one no entry
   * names, still has a buffered write (one batched, lock-free read). Under the interval's Shared or Exclusive lease
   * the answer can only turn from true to false meanwhile, as buffered writes are applied.
   */
  public boolean buffersOverlapping(Interval<K> interval) {
    List<EntityKey> documents =
        Stream.concat(
                unindexed.stream(),
                index.overlapping(interval).stream()
                    .flatMap(entry -> entry.write().documents.stream()))
            .distinct()
            .toList();
    return !documents.isEmpty() && !engine.bufferedAmong(documents).isEmpty();
  }

  /** The number of entries in BuWrInT: writes whose buffered changes may not have reached the data store yet. */
  public int bufferedEntries() {
    return index.size();
  }

  /**
   * Stops the background pass and logs the queued removals. Closes the engine only if it is owned by a range (it
   * serves this range alone); never the cache client.
   */
  @Override
  public void close() {
    try {
      closeRange();
    } finally {
      try {
        if (claim != null) {
          claim.close();
        }
      } finally {
        if (documentAttribute != null) {
          engine.close();
        }
      }
    }
  }

  /**
   * The range's claim this took when it was built, for the Dendrite over it (which then claims nothing more): empty
   * for an engine owned by a range, whose ownership its coordinator granted, and for TARDIS's index, whose Dendrite
   * claims the range before the index is built.
   *
   * @throws IllegalStateException when the Dendrite is of another range than this
   */
  @Override
  public Optional<Coordinator.RangeClaim> rangeClaim(String collection, String domain) {
    if (!(this.collection.equals(collection) && this.domain.equals(domain))) {
      throw new IllegalStateException(
          "this range write-back buffers range "
              + this.collection
              + "."
              + this.domain
              + ", not "
              + collection
              + "."
              + domain
              + ": a Dendrite must be of its buffer's range");
    }
    return Optional.ofNullable(claim);
  }

  private void closeRange() {
    closed = true;
    engine.replicaRepair().unregister(restoreLog);
    background.shutdownNow();
    try {
      background.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    }
    intervalLog.flushRemoved();
  }

  /** Restores the log's replicas after a cache server came back; a compaction waits meanwhile. */
  private int restoreLog() {
    logLock.readLock().lock();
    try (FenceScope fenced = engine.fenced()) {
      return intervalLog.restoreReplicas();
    } finally {
      logLock.readLock().unlock();
    }
  }

  /** Removes the entries the drain threads applied, then compacts the log if it grew enough. */
  private void backgroundPass() {
    try {
      removeApplied();
      if (intervalLog.appendedSinceRewrite() >= compactAfterRecords) {
        compact();
      }
    } catch (RuntimeException failed) {
      if (!closed) { // closing interrupts a pass waiting for the cache: nothing failed then
        log.warn("range write-back background pass failed; it runs again", failed);
      }
    }
  }

  /**
   * Every flag is read before any document is looked at: an entry settled before its documents were all seen
   * without a buffered write had its changes in those buffered writes, which are deleted only once applied.
   */
  void removeApplied() {
    List<BufferedWriteIndex.Entry<K, IndexedWrite>> entries = index.entries();
    List<Boolean> settled = entries.stream().map(entry -> entry.write().settled).toList();
    Set<EntityKey> buffered =
        engine.bufferedAmong(
            entries.stream()
                .flatMap(entry -> entry.write().documents.stream())
                .collect(Collectors.toSet()));
    for (int i = 0; i < entries.size(); i++) {
      if (settled.get(i)
          && entries.get(i).write().documents.stream().noneMatch(buffered::contains)) {
        remove(entries.get(i));
      }
    }
  }

  /** Rewrites the log to the entries in force, while no entry is being appended. */
  void compact() {
    logLock.writeLock().lock();
    try {
      intervalLog.rewrite(index.entries().stream().map(entry -> entry.write().record).toList());
    } finally {
      logLock.writeLock().unlock();
    }
  }

  private void remove(BufferedWriteIndex.Entry<K, IndexedWrite> entry) {
    if (index.remove(entry)) {
      intervalLog.appendRemoved(entry.write().record.lsn());
    }
  }

  private List<EntityChanges> changesOf(DocumentChanges change) {
    List<EntityChanges> changes = change.each();
    for (EntityChanges one : changes) {
      if (!one.key().collection().equals(collection)) {
        throw new IllegalArgumentException(
            "range write-back of collection "
                + collection
                + " cannot buffer a change to "
                + one.key());
      }
    }
    return changes;
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
    private int logPartitions = 16;
    private int logBatch = 16;
    private long compactAfterRecords = 4096;
    private Duration reapInterval = Duration.ofMillis(100);
    private boolean applyOnMiss = true;
    private Function<EntityKey, K> documentAttribute;
    private boolean claimsTheRange = true;
    private Duration claimLifetime = Duration.ofSeconds(10);

    private Builder(DomainType<K> type) {
      this.type = Objects.requireNonNull(type, "type");
    }

    /**
     * The Design 1 engine that buffers, replicates, drains and converts each document's changes; its replica count
     * R is also the log's. Required.
     */
    public Builder<K> writeBack(DocumentWriteBack writeBack) {
      this.engine = DocumentEngine.of(writeBack);
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
        return new RangeWriteBack<>(this, claim);
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
