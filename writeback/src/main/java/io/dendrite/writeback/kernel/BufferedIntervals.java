package io.dendrite.writeback.kernel;

import io.dendrite.core.Coordinator;
import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import io.dendrite.core.WriteBuffer;
import io.dendrite.core.interval.BufferedWriteIndex;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * BuWrInT (the CPR paper's §3.2) over a {@link DocumentEngine}: a Dendrite's write buffer whose writes' changes are
 * buffered per document by the engine, and whose writes' intervals are indexed with the documents they touched, so
 * that a range get that misses applies every buffered write overlapping its interval before it queries. {@code
 * io.dendrite.writeback.document.RangeWriteBack} is it over a {@code DocumentWriteBack}, and its class comment says
 * what users are promised (order, handover); TARDIS keeps it over its teleported writes ({@link Settings#of}: the
 * defaults RangeWriteBack documents). How the promises are kept:
 *
 * <p>Every index change is logged ({@link BufferedIntervalLog}, pinned and replicated like the buffered writes), and
 * the constructor rebuilds the index from the log, so a process taking the range over finds every buffered write's
 * interval; it compacts the log it takes over, so one instance per collection and domain may run at a time (the
 * Dendrite's coordinator, or the claim this is given, sees to it). A write's log record and its buffered writes go
 * out together, so a process that dies between them can leave a buffered write no record names: the constructor
 * also reads the engine's pending-writes listings, and every miss applies the documents of this collection listed
 * there but named by no record first, until one has.
 *
 * <p>Entries whose documents the engine's drain threads applied leave the index through a background pass that
 * removes an entry only if it was fully buffered <em>before</em> it saw none of its documents still buffered: a
 * buffered write is deleted only after what it held was applied, so that proves the entry's writes reached the
 * store, whatever was written to the documents since.
 *
 * <p>Thread-safe. {@link #close()} stops the background pass, logs the queued removals, closes the claim it was
 * given, and closes the engine only if a range owns it ({@link DocumentEngine#ownedRange}): it serves that range
 * alone.
 *
 * @param <K> the type of the range attribute
 */
public final class BufferedIntervals<K extends Comparable<? super K>>
    implements WriteBuffer<K, DocumentChanges>, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BufferedIntervals.class);

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

  /**
   * What a range's buffered intervals are kept with; each is documented at its setter in {@code
   * RangeWriteBack.Builder}.
   *
   * @param applyOnMiss false only for a negative control: a miss applies nothing first
   * @param documentAttribute the range attribute of a document, for an engine owned by a range; null otherwise
   */
  public record Settings<K extends Comparable<? super K>>(
      DomainType<K> type,
      String collection,
      String domain,
      int logPartitions,
      int logBatch,
      long compactAfterRecords,
      Duration reapInterval,
      boolean applyOnMiss,
      Function<EntityKey, K> documentAttribute) {

    /** The defaults for {@code collection}'s range attribute {@code domain}, of type {@code type}. */
    public static <K extends Comparable<? super K>> Settings<K> of(
        DomainType<K> type, String collection, String domain) {
      return new Settings<>(
          type, collection, domain, 16, 16, 4096, Duration.ofMillis(100), true, null);
    }
  }

  /**
   * Rebuilds the index from the log in the cache and compacts the log, then starts the background pass.
   *
   * @param claim the range's ownership claim, closed with this; null when the caller holds the range otherwise (a
   *     coordinator granted it to the engine's range, or the Dendrite over this claimed it)
   */
  public BufferedIntervals(
      DocumentEngine engine, Settings<K> settings, Coordinator.RangeClaim claim) {
    this.claim = claim;
    this.domain = settings.domain();
    this.type = settings.type();
    this.engine = engine;
    this.collection = settings.collection();
    this.compactAfterRecords = settings.compactAfterRecords();
    this.applyOnMiss = settings.applyOnMiss();
    this.documentAttribute = settings.documentAttribute();
    this.intervalLog =
        new BufferedIntervalLog(
            engine.cache(),
            settings.collection(),
            settings.domain(),
            settings.logPartitions(),
            engine.replicas(),
            settings.logBatch());
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
              Thread thread = new Thread(task, "range-writeback-" + collection + "-" + domain);
              thread.setDaemon(true);
              return thread;
            });
    long every = settings.reapInterval().toNanos();
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
   * The range's claim this was started with, for the Dendrite over it (which then claims nothing more): empty for an
   * engine owned by a range, whose ownership its coordinator granted, and for TARDIS's index, whose Dendrite claims
   * the range before the index is started.
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
  private void removeApplied() {
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

  /**
   * Rewrites the log to the entries in force, while no entry is being appended: what the background pass does once
   * {@code compactAfterRecords} records were appended since the last rewrite.
   */
  public void compact() {
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
}
