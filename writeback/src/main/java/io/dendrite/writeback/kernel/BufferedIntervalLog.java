package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReplicatedStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * BuWrInT's log (CPR §3.1): the records from which a process that takes a range over rebuilds the intervals of the
 * range's buffered writes. Records are appended to a fixed set of partition keys {@code bl:<collection>:<domain>:<n>},
 * each pinned and replicated on the same R servers count as the buffered writes, because losing a record loses a
 * buffered write's interval, and with it the guarantee that a range miss applies it.
 *
 * <ul>
 *   <li>An {@link BufferedIntervalRecord.Kind#INDEXED} record is appended synchronously, before its buffered writes
 *       are, so a crash leaves at worst an entry without a buffered write (applying it is a no-op).
 *   <li>{@link BufferedIntervalRecord.Kind#REMOVED} records are batched, {@code batch} at a time, because a lost one
 *       only leaves such an extra entry.
 *   <li>Replicas are appended independently, so one on a restarted server may hold only recent records: reading
 *       merges every reachable replica of every partition, which is exact because records are facts named by LSN.
 *   <li>{@link #rewrite} compacts the log to the entries in force. The caller must keep appends of indexed records
 *       out meanwhile; a removed record racing with it at worst leaves an extra entry.
 * </ul>
 *
 * <p>Thread-safe.
 */
final class BufferedIntervalLog {
  private static final Logger log = LoggerFactory.getLogger(BufferedIntervalLog.class);

  private final String keyPrefix;
  private final int partitions;
  private final ReplicatedStore store;

  /** The same replicas, for restoring a partition's lines on a replica that lacks them. */
  private final PinnedReplicas copies;

  private final int batch;
  private final List<String> pendingRemovals = new ArrayList<>();
  private final AtomicLong lastLsn = new AtomicLong();
  private final AtomicLong appendedSinceRewrite = new AtomicLong();
  private int nextRemovalPartition;

  BufferedIntervalLog(
      IqClient cache, String collection, String domain, int partitions, int replicas, int batch) {
    this.keyPrefix = "bl:" + collection + ":" + domain + ":";
    this.partitions = partitions;
    this.store = cache.replicaPlacement().store(replicas);
    this.copies = new PinnedReplicas(cache, replicas);
    this.batch = batch;
  }

  /** The next log sequence number, above every one this log has read or handed out. */
  long nextLsn() {
    return lastLsn.incrementAndGet();
  }

  /**
   * Appends an indexed record to every replica of its partition now.
   *
   * @return false when a server's pinned memory refused it (the caller must not rely on the record then)
   * @throws IqException when a replica answered otherwise, or no reachable replica holds the record
   */
  boolean appendIndexed(BufferedIntervalRecord record) {
    return appendIndexedAsync(record).await();
  }

  /** {@link #appendIndexed}, sent now. */
  PinnedReplicas.Sent<Boolean> appendIndexedAsync(BufferedIntervalRecord record) {
    PinnedReplicas.Sent<Outcome> sent =
        appendAsync(
            partitionKey(Math.floorMod(record.lsn(), partitions)), List.of(record.toLine()));
    return () -> {
      Outcome outcome = sent.await();
      if (outcome == Outcome.PINNED_MEMORY_FULL) {
        return false;
      }
      if (!outcome.isOk()) {
        throw new IqException(
            "could not log the buffered write " + record.toLine() + ": " + outcome);
      }
      return true;
    };
  }

  /** Queues a removed record; appends the queue once it holds {@code batch} records. */
  void appendRemoved(long lsn) {
    List<String> full = null;
    synchronized (pendingRemovals) {
      pendingRemovals.add(BufferedIntervalRecord.removed(lsn).toLine());
      if (pendingRemovals.size() >= batch) {
        full = new ArrayList<>(pendingRemovals);
        pendingRemovals.clear();
      }
    }
    if (full != null) {
      appendRemovals(full);
    }
  }

  /** Appends every queued removed record now. */
  void flushRemoved() {
    List<String> queued;
    synchronized (pendingRemovals) {
      queued = new ArrayList<>(pendingRemovals);
      pendingRemovals.clear();
    }
    if (!queued.isEmpty()) {
      appendRemovals(queued);
    }
  }

  /** How many records were appended since the last {@link #rewrite} (or since this log was made). */
  long appendedSinceRewrite() {
    return appendedSinceRewrite.get();
  }

  /**
   * Reads every replica of every partition and returns the entries in force, in LSN order; later LSNs are higher
   * than any read.
   */
  List<BufferedIntervalRecord> readLive() {
    List<BufferedIntervalRecord> records = new ArrayList<>();
    for (int n = 0; n < partitions; n++) {
      for (CacheValue replica : store.getEach(partitionKey(n))) {
        for (String line : new String(replica.data(), StandardCharsets.UTF_8).split("\n")) {
          BufferedIntervalRecord.parse(line).ifPresent(records::add);
        }
      }
    }
    long maxLsn = records.stream().mapToLong(BufferedIntervalRecord::lsn).max().orElse(0);
    lastLsn.accumulateAndGet(maxLsn, Math::max);
    return BufferedIntervalRecord.live(records);
  }

  /**
   * Replaces every partition with the records of {@code live} it holds. Partition 0 also keeps a removed record of
   * a fresh LSN, never given to an entry, so that LSNs keep growing across processes even when nothing is live.
   *
   * @throws IqException when a partition could not be rewritten (those rewritten before stay compacted, which is
   *     as correct as the log they replaced)
   */
  void rewrite(List<BufferedIntervalRecord> live) {
    Map<Integer, StringBuilder> byPartition = new HashMap<>();
    byPartition
        .computeIfAbsent(0, n -> new StringBuilder())
        .append(BufferedIntervalRecord.removed(nextLsn()).toLine())
        .append('\n');
    for (BufferedIntervalRecord record : live) {
      byPartition
          .computeIfAbsent(Math.floorMod(record.lsn(), partitions), n -> new StringBuilder())
          .append(record.toLine())
          .append('\n');
    }
    appendedSinceRewrite.set(0);
    for (int n = 0; n < partitions; n++) {
      String key = partitionKey(n);
      StringBuilder content = byPartition.get(n);
      Outcome outcome =
          content == null
              ? store.delete(key)
              : store.set(key, content.toString().getBytes(StandardCharsets.UTF_8));
      if (!outcome.isOk() && outcome != Outcome.NOT_FOUND) {
        throw new IqException("could not rewrite the log partition " + key + ": " + outcome);
      }
    }
  }

  /**
   * Gives every replica of every partition the records another replica holds and it lacks: restores the log on a
   * server that restarted empty (see {@link ReplicaRepair}). The caller keeps {@link #rewrite} out meanwhile.
   *
   * @return how many replicas were appended to
   */
  int restoreReplicas() {
    List<String> keys = new ArrayList<>();
    for (int n = 0; n < partitions; n++) {
      keys.add(partitionKey(n));
    }
    return copies.restoreLines(keys);
  }

  private void appendRemovals(List<String> lines) {
    int partition;
    synchronized (pendingRemovals) {
      partition = nextRemovalPartition;
      nextRemovalPartition = (nextRemovalPartition + 1) % partitions;
    }
    try {
      Outcome outcome = append(partitionKey(partition), lines);
      if (!outcome.isOk()) {
        log.warn(
            "{} removed records not logged ({}); a process that takes over reapplies no-ops",
            lines.size(),
            outcome);
      }
    } catch (IqException failed) {
      log.warn(
          "{} removed records not logged; a process that takes over reapplies no-ops",
          lines.size(),
          failed);
    }
  }

  /**
   * Appends to every replica. A replica on a lost server is tolerated as the buffered writes tolerate it: the
   * append counts when a reachable replica shows it (records are unique, so finding the first line is proof).
   */
  private Outcome append(String key, List<String> lines) {
    return appendAsync(key, lines).await();
  }

  /** {@link #append}, sent now. */
  private PinnedReplicas.Sent<Outcome> appendAsync(String key, List<String> lines) {
    List<byte[]> values =
        lines.stream().map(line -> (line + "\n").getBytes(StandardCharsets.UTF_8)).toList();
    appendedSinceRewrite.addAndGet(lines.size());
    CompletableFuture<Outcome> sent = store.appendAsync(key, values);
    return () -> {
      try {
        return sent.join();
      } catch (CompletionException failed) {
        if (!(failed.getCause() instanceof IqConnectionException unreachable)) {
          throw failed.getCause() instanceof IqException iq ? iq : failed;
        }
        for (CacheValue replica : store.getEach(key)) {
          String content = "\n" + new String(replica.data(), StandardCharsets.UTF_8);
          if (content.contains("\n" + lines.get(0) + "\n")) {
            return Outcome.OK;
          }
        }
        throw unreachable;
      }
    };
  }

  private String partitionKey(int n) {
    return keyPrefix + n;
  }
}
