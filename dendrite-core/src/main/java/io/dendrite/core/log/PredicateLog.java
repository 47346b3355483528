package io.dendrite.core.log;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A range's log of PrInT changes, kept in the cache servers so that a process that takes the range
 * over can rebuild the index (CPR §3.1).
 *
 * <p>Records are pinned and co-located with the cache entry they describe: each server holds its own
 * log partitions, and a record goes to a partition on the server of its entry's key, so losing a server
 * loses its entries and their records together. Insert and cover records are appended synchronously,
 * before the entry they describe is stored; delete and uncover records are buffered per server and
 * appended {@code alpha} at a time with one multi-append ({@code mappend}), because an index entry
 * whose value is gone only costs a miss.
 *
 * <p>A fixed set of {@value #PARTITIONS} partition keys is spread over the servers by the client's
 * hash ring, so rebuilding reads a known set of keys whatever servers there are.
 *
 * <p>The log is pinned, and every fill and drop appends to it: left alone it would grow until pinned memory
 * refused new records (then fills stop being cached, and write-back falls back to write-through). So it is rewritten
 * compacted not only when an owner rebuilds the index, but also while the range is served, once the records appended
 * since the last compaction outnumber twice those in force then ({@link #compactWhenDue}); appends wait meanwhile.
 *
 * <p>Thread-safe.
 */
public final class PredicateLog {
  private static final Logger LOG = LoggerFactory.getLogger(PredicateLog.class);

  /** Number of log partition keys per range. */
  public static final int PARTITIONS = 256;

  /** The fewest records appended since the last compaction that make the next one due. */
  public static final int MIN_RECORDS_BEFORE_COMPACTION = 1024;

  private final IqClient cache;
  private final IntFunction<String> partitionKey;
  private final int alpha;
  private final Map<ServerAddress, List<String>> partitionsByServer = new HashMap<>();
  private final Map<ServerAddress, List<LogRecord>> bufferedRemovals = new HashMap<>();
  private final AtomicLong nextLsn = new AtomicLong(1);

  /** Appends hold it shared; a compaction holds it exclusively, so that no record lands in a partition it rewrites. */
  private final ReentrantReadWriteLock appends = new ReentrantReadWriteLock();

  private final AtomicLong appendedSinceCompaction = new AtomicLong();
  private final AtomicBoolean compacting = new AtomicBoolean();
  private volatile long inForceAtCompaction;
  private volatile boolean compactsWhileServed = true;

  /**
   * @param cache the cache servers
   * @param partitionKey the key of partition n
   * @param alpha how many delete/uncover records to buffer per server before appending them
   */
  public PredicateLog(IqClient cache, IntFunction<String> partitionKey, int alpha) {
    if (alpha < 1) {
      throw new IllegalArgumentException("alpha must be at least 1, got " + alpha);
    }
    this.cache = cache;
    this.partitionKey = partitionKey;
    this.alpha = alpha;
    for (int n = 0; n < PARTITIONS; n++) {
      String key = partitionKey.apply(n);
      partitionsByServer.computeIfAbsent(serverOf(key), s -> new ArrayList<>()).add(key);
    }
  }

  /** The next log sequence number. */
  public long nextLsn() {
    return nextLsn.getAndIncrement();
  }

  /**
   * Appends an insert or cover record now, to a partition on the server of {@code colocatedWith}.
   *
   * @return false if the server did not store it (the caller must not store the entry then)
   */
  public boolean appendNow(LogRecord record, String colocatedWith) {
    return appendAll(partitionFor(colocatedWith), List.of(record));
  }

  /** Buffers a delete or uncover record; appends the server's buffer once it holds {@code alpha} records. */
  public void appendLater(LogRecord record, String colocatedWith) {
    ServerAddress server = serverOf(colocatedWith);
    List<LogRecord> full = null;
    synchronized (bufferedRemovals) {
      List<LogRecord> buffer = bufferedRemovals.computeIfAbsent(server, s -> new ArrayList<>());
      buffer.add(record);
      if (buffer.size() >= alpha) {
        full = new ArrayList<>(buffer);
        buffer.clear();
      }
    }
    if (full != null) {
      appendAll(partitionFor(colocatedWith), full);
    }
  }

  /** Appends every buffered record now. */
  public void flush() {
    Map<ServerAddress, List<LogRecord>> toAppend = new HashMap<>();
    synchronized (bufferedRemovals) {
      bufferedRemovals.forEach(
          (server, buffer) -> {
            if (!buffer.isEmpty()) {
              toAppend.put(server, new ArrayList<>(buffer));
              buffer.clear();
            }
          });
    }
    toAppend.forEach((server, records) -> appendAll(partitionsOf(server).get(0), records));
  }

  /**
   * Reads every partition and returns the records in force (compacted), in LSN order; later records
   * get higher LSNs than any read.
   */
  public List<LogRecord> readCompacted() {
    List<String> keys = new ArrayList<>();
    for (int n = 0; n < PARTITIONS; n++) {
      keys.add(partitionKey.apply(n));
    }
    List<LogRecord> records = new ArrayList<>();
    for (CacheValue value : cache.getAll(keys).values()) {
      for (String line : new String(value.data(), StandardCharsets.UTF_8).split("\n")) {
        LogRecord.parse(line).ifPresent(records::add);
      }
    }
    List<LogRecord> live = LogCompaction.compact(records);
    long maxLsn = records.stream().mapToLong(LogRecord::lsn).max().orElse(0);
    nextLsn.accumulateAndGet(maxLsn + 1, Math::max);
    return live;
  }

  /**
   * Replaces the whole log with {@code live} (records in force, each with the key it is co-located
   * with). Callers must make sure no record is appended meanwhile.
   */
  public void rewrite(Map<LogRecord, String> live) {
    inForceAtCompaction = live.size();
    appendedSinceCompaction.set(0);
    Map<String, StringBuilder> byPartition = new HashMap<>();
    live.forEach(
        (record, colocatedWith) ->
            byPartition
                .computeIfAbsent(partitionFor(colocatedWith), p -> new StringBuilder())
                .append(record.toLine())
                .append('\n'));
    for (int n = 0; n < PARTITIONS; n++) {
      String key = partitionKey.apply(n);
      StringBuilder content = byPartition.get(key);
      if (content == null) {
        cache.delete(key);
      } else {
        cache.setPinned(key, content.toString().getBytes(StandardCharsets.UTF_8));
      }
    }
  }

  /**
   * Rewrites the log compacted when it is due: once the records appended since the last compaction (or rebuild)
   * reach {@value #MIN_RECORDS_BEFORE_COMPACTION} and twice the records in force then. Appends wait meanwhile;
   * buffered removals are appended first. A rewrite that fails part-way leaves each partition either as it was or
   * compacted, which rebuilds the same index (an insert whose delete went first only costs a miss); it is logged,
   * not thrown, and tried again later.
   *
   * @param colocatedWith the key each record in force is kept beside: its entry's, or its interval's entry key
   * @return whether it compacted now
   */
  public boolean compactWhenDue(Function<LogRecord, String> colocatedWith) {
    long appended = appendedSinceCompaction.get();
    if (!compactsWhileServed
        || appended < Math.max(MIN_RECORDS_BEFORE_COMPACTION, 2 * inForceAtCompaction)
        || !compacting.compareAndSet(false, true)) {
      return false;
    }
    appends.writeLock().lock();
    try {
      flush();
      Map<LogRecord, String> live = new LinkedHashMap<>();
      readCompacted().forEach(record -> live.put(record, colocatedWith.apply(record)));
      rewrite(live);
      return true;
    } catch (RuntimeException failed) {
      LOG.warn("compacting the predicate log failed, to be tried again: {}", failed.toString());
      return false;
    } finally {
      appends.writeLock().unlock();
      compacting.set(false);
    }
  }

  /** Test-only: the log grows until an owner rebuilds it, as before, to show that a test can tell. */
  public void compactOnlyAtRebuildForTesting() {
    compactsWhileServed = false;
  }

  private boolean appendAll(String partition, List<LogRecord> records) {
    List<byte[]> lines =
        records.stream()
            .map(record -> (record.toLine() + "\n").getBytes(StandardCharsets.UTF_8))
            .toList();
    appends.readLock().lock();
    try {
      appendedSinceCompaction.addAndGet(records.size());
      return cache.appendAll(partition, lines, true) == Outcome.OK;
    } finally {
      appends.readLock().unlock();
    }
  }

  private String partitionFor(String colocatedWith) {
    List<String> partitions = partitionsOf(serverOf(colocatedWith));
    return partitions.get(Math.floorMod(colocatedWith.hashCode(), partitions.size()));
  }

  private List<String> partitionsOf(ServerAddress server) {
    List<String> partitions = partitionsByServer.get(server);
    if (partitions == null) {
      // Only with more servers than the ring spreads 256 keys over: fall back to any partition.
      return partitionsByServer.values().iterator().next();
    }
    return partitions;
  }

  private ServerAddress serverOf(String key) {
    return cache.replicaPlacement().serversFor(key, 1).get(0);
  }
}
