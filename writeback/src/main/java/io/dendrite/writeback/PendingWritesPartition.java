package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.EntityKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One of the α pinned, replicated {@code PendingWrites:<i>} keys through which drain threads discover documents
 * with buffered writes. Buffered-write keys are hash partitioned over them so that concurrent writers rarely
 * contend for one list. A line is {@code <buffered-write key> <epoch millis when it was registered>}.
 *
 * <p>Races: {@link #add} and {@link #remove} rewrite the whole list under the partition's {@link ExclusiveLease},
 * so no concurrent change is lost. {@link #entries} reads without a lease and may be stale either way, which is
 * harmless: an entry registered meanwhile is found on the next pass, and an entry whose buffered write is already
 * applied drains to a no-op that removes it. A writer registers before it stores the buffered write and a drain
 * removes the entry only after it deleted the buffered write, both under the buffered write's lease, so every
 * buffered write is listed (a crash between the two steps leaves at most an entry without a buffered write).
 */
final class PendingWritesPartition {
  private final PinnedLines lines;

  PendingWritesPartition(IqClient cache, PinnedReplicas replicas, int index) {
    this.lines = new PinnedLines(cache, replicas, "PendingWrites:" + index);
  }

  /** The partition, of {@code partitionCount}, that lists {@code bufferedWriteKey}. */
  static int indexOf(String bufferedWriteKey, int partitionCount) {
    return Math.floorMod(bufferedWriteKey.hashCode(), partitionCount);
  }

  /** A document with a buffered write and when that buffered write was first registered. */
  record Entry(EntityKey key, Instant since) {}

  /** The listed documents, oldest first (a lease-free snapshot, see the class comment). */
  List<Entry> entries() {
    List<Entry> entries = new ArrayList<>();
    for (String line : lines.read()) {
      int space = line.indexOf(' ');
      entries.add(new Entry(BufferedWriteKey.parse(line.substring(0, space)),
          Instant.ofEpochMilli(Long.parseLong(line.substring(space + 1)))));
    }
    return entries;
  }

  /**
   * Lists {@code bufferedWriteKey} unless it is listed already.
   *
   * @return {@link Outcome#OK}, or the refusal (e.g. {@link Outcome#PINNED_MEMORY_FULL}) of the pinned set
   */
  Outcome add(String bufferedWriteKey, Instant now) {
    return lines.addUnlessPresent(bufferedWriteKey + " " + now.toEpochMilli(),
        line -> line.startsWith(bufferedWriteKey + " "));
  }

  /** Unlists {@code bufferedWriteKey}. */
  void remove(String bufferedWriteKey) {
    lines.removeIf(line -> line.startsWith(bufferedWriteKey + " "));
  }
}
