package io.dendrite.writeback;

import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.EntityKey;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One of the α pinned, replicated {@code PendingWrites:<i>} keys through which drain threads discover documents
 * with buffered writes. Buffered-write keys are hash partitioned over them so that concurrent writers rarely
 * contend for one list.
 *
 * <p>The list is a log, appended to and never rewritten on the write path: {@code +<buffered-write key> <epoch
 * millis>} lists a document, {@code -<buffered-write key>} unlists it, and reading folds the lines in order. A change
 * is one {@code mappend} per replica, whatever the list's length; unlisting rewrites the log to its listed documents
 * when unlisted lines outnumber them.
 *
 * <p>Races: every append and rewrite runs under the partition's lock, so replicas see the same lines in the
 * same order and a rewrite loses no append. {@link #entries} reads without a lock and may be stale either way,
 * which is harmless: an entry registered meanwhile is found on the next pass, and an entry whose buffered write is
 * already applied drains to a no-op that unlists it. A writer lists a document before it stores the buffered write,
 * and a drain unlists it only after it deleted the buffered write, both under the document's lock, so every
 * buffered write is listed (a crash between the two steps leaves at most an entry without a buffered write).
 */
final class PendingWritesPartition {
  /** A rewrite is due when the log would hold this many more lines than twice the listed documents. */
  private static final int COMPACTION_SLACK = 64;

  private final PinnedReplicas replicas;
  private final KeyLocks locks;
  private final String key;

  PendingWritesPartition(PinnedReplicas replicas, KeyLocks locks, int index) {
    this.replicas = replicas;
    this.locks = locks;
    this.key = "PendingWrites:" + index;
  }

  /** The partition, of {@code partitionCount}, that lists {@code bufferedWriteKey}. */
  static int indexOf(String bufferedWriteKey, int partitionCount) {
    return Math.floorMod(bufferedWriteKey.hashCode(), partitionCount);
  }

  /** A document with a buffered write and when that buffered write was first registered. */
  record Entry(EntityKey key, Instant since) {}

  /**
   * The documents listed in each of {@code partitions}, partition by partition, read in one batch (a lock-free
   * snapshot, see the class comment).
   */
  static List<Entry> entries(PinnedReplicas replicas, List<PendingWritesPartition> partitions) {
    Map<String, byte[]> logs = replicas.getAll(partitions.stream().map(partition -> partition.key).toList());
    List<Entry> entries = new ArrayList<>();
    for (PendingWritesPartition partition : partitions) {
      byte[] log = logs.get(partition.key);
      if (log != null) {
        entries.addAll(fold(PinnedLines.lines(log)).values());
      }
    }
    return entries;
  }

  /** The listed documents, oldest first (a lock-free snapshot, see the class comment). */
  List<Entry> entries() {
    return entries(replicas, List.of(this));
  }

  /**
   * Lists {@code bufferedWriteKey}.
   *
   * @return {@link Outcome#OK}, or the refusal (e.g. {@link Outcome#PINNED_MEMORY_FULL}) of the pinned append
   */
  Outcome add(String bufferedWriteKey, Instant now) {
    return append(List.of("+" + bufferedWriteKey + " " + now.toEpochMilli()));
  }

  /**
   * Unlists those of {@code bufferedWriteKeys} that are listed, in one append, or by rewriting the log to the
   * documents that stay listed when that is due (unlisted lines outnumber listed ones) or when pinned memory refuses
   * the append (the rewrite shrinks the log).
   */
  void removeAll(Collection<String> bufferedWriteKeys) {
    try (KeyLocks.Held lock = locks.acquire(key)) {
      List<String> lines = readLines();
      Map<String, Entry> listed = fold(lines);
      List<String> unlisting = bufferedWriteKeys.stream().filter(listed::containsKey)
          .map(bufferedKey -> "-" + bufferedKey).toList();
      if (unlisting.isEmpty()) {
        return;
      }
      bufferedWriteKeys.forEach(listed::remove);
      lock.ensureHeld();
      if (listed.isEmpty() || lines.size() + unlisting.size() > 2 * listed.size() + COMPACTION_SLACK
          || !replicas.append(key, unlisting).isOk()) {
        rewrite(listed);
      }
    }
  }

  private Outcome append(List<String> lines) {
    try (KeyLocks.Held lock = locks.acquire(key)) {
      lock.ensureHeld();
      return replicas.append(key, lines);
    }
  }

  /** Replaces the log by one line per listed document, deleting it when none is; the caller holds the lock. */
  private void rewrite(Map<String, Entry> listed) {
    if (listed.isEmpty()) {
      replicas.delete(key);
      return;
    }
    StringBuilder compacted = new StringBuilder();
    listed.forEach((bufferedKey, entry) ->
        compacted.append('+').append(bufferedKey).append(' ').append(entry.since().toEpochMilli()).append('\n'));
    // Shrinking a pinned value frees quota, so only a lost server can refuse it; the old log stays valid then.
    Outcome outcome = replicas.set(key, compacted.toString().getBytes(StandardCharsets.UTF_8));
    if (!outcome.isOk()) {
      throw new IqException("could not rewrite " + key + ": " + outcome);
    }
  }

  private List<String> readLines() {
    return PinnedLines.read(replicas, key);
  }

  /** The documents listed after {@code lines}, in the order they were first listed. */
  private static Map<String, Entry> fold(List<String> lines) {
    Map<String, Entry> listed = new LinkedHashMap<>();
    for (String line : lines) {
      if (line.charAt(0) == '-') {
        listed.remove(line.substring(1));
      } else if (line.charAt(0) == '+') {
        int space = line.indexOf(' ');
        String bufferedKey = line.substring(1, space);
        listed.putIfAbsent(bufferedKey, new Entry(BufferedWriteKey.parse(bufferedKey),
            Instant.ofEpochMilli(Long.parseLong(line.substring(space + 1)))));
      }
    }
    return listed;
  }
}
