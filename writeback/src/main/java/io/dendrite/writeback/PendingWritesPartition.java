package io.dendrite.writeback;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.writeback.change.EntityKey;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the α pinned, replicated {@code PendingWrites:<i>} keys through which drain threads discover documents
 * with buffered writes. Buffered-write keys are hash partitioned over them so that concurrent writers rarely
 * contend for one list.
 *
 * <p>The list is a set of <em>listings</em> that only grows by appends: {@code +<buffered-write key> <epoch millis>
 * <id>} adds a listing with a fresh random id, {@code -<buffered-write key> <id>} removes that listing and no other.
 * A document is listed while it has a listing. Because a removal names the id it removes, the order in which lines
 * reach a replica does not matter, appends need no lock, and a drain that removes the listings it saw cannot remove
 * one a writer added after them. Reads merge the lines of every reachable replica, so a replica that restarted empty,
 * or missed an append while another answered, hides nothing.
 *
 * <p>The invariant every buffered write relies on, both steps under the document's lock: a writer adds a listing
 * before it stores a document's first buffered write, and a drain removes the listings it saw only after it deleted
 * the buffered write they announced. So a buffered write always has a listing; a crash between the steps leaves at
 * most a listing without a buffered write, which a drain removes as a no-op. (With in-process locks a writer sends
 * the listing and the buffered write together and puts the buffered write back unless both are confirmed; see
 * {@link BufferedWrites#startWrite} for why that stays safe.) The log is rewritten to its live
 * listings when dead lines outnumber them, per replica and only if that replica did not change meanwhile (CAS).
 */
final class PendingWritesPartition {
  private static final Logger log = LoggerFactory.getLogger(PendingWritesPartition.class);
  /** A rewrite is due when the log holds this many more lines than twice the live listings. */
  private static final int COMPACTION_SLACK = 64;

  private final PinnedReplicas replicas;
  private final String key;

  PendingWritesPartition(PinnedReplicas replicas, int index) {
    this.replicas = replicas;
    this.key = "PendingWrites:" + index;
  }

  /** The cache key of this partition's log. */
  String key() {
    return key;
  }

  /** The partition, of {@code partitionCount}, that lists {@code bufferedWriteKey}. */
  static int indexOf(String bufferedWriteKey, int partitionCount) {
    return Math.floorMod(bufferedWriteKey.hashCode(), partitionCount);
  }

  /** A document with a buffered write and when its oldest live listing was added. */
  record Entry(EntityKey key, Instant since) {}

  /** One listing: a line {@code +<bufferedKey> <since> <id>} not yet removed. */
  record Listing(String bufferedKey, String id, Instant since) {}

  /** The documents listed in {@code partitions}, oldest listing first, read in one batch (a lock-free snapshot). */
  static List<Entry> entries(PinnedReplicas replicas, List<PendingWritesPartition> partitions) {
    Map<String, Entry> byKey = new LinkedHashMap<>();
    for (Listing listing : listings(replicas, partitions)) {
      byKey.merge(listing.bufferedKey(), new Entry(BufferedWriteKey.parse(listing.bufferedKey()), listing.since()),
          (a, b) -> a.since().isAfter(b.since()) ? b : a);
    }
    return byKey.values().stream().sorted(Comparator.comparing(Entry::since)).toList();
  }

  /** The live listings of {@code partitions}, merged over every reachable replica, in one batch of reads. */
  static List<Listing> listings(PinnedReplicas replicas, Collection<PendingWritesPartition> partitions) {
    Map<String, Map<ServerAddress, CacheValue>> logs =
        replicas.getAllOnEach(partitions.stream().map(partition -> partition.key).distinct().toList());
    List<Listing> listings = new ArrayList<>();
    for (Map<ServerAddress, CacheValue> copies : logs.values()) {
      listings.addAll(live(copies.values().stream().flatMap(copy -> PinnedLines.lines(copy.data()).stream())
          .toList()));
    }
    return listings;
  }

  /** The listed documents, oldest first (a lock-free snapshot). */
  List<Entry> entries() {
    return entries(replicas, List.of(this));
  }

  /**
   * Lists {@code bufferedWriteKey} with a new listing.
   *
   * @return {@link Outcome#OK}, or the refusal (e.g. {@link Outcome#PINNED_MEMORY_FULL}) of the pinned append
   */
  Outcome add(String bufferedWriteKey, Instant now) {
    return addAsync(bufferedWriteKey, now).await();
  }

  /** {@link #add}, sent now. */
  PinnedReplicas.Sent<Outcome> addAsync(String bufferedWriteKey, Instant now) {
    String id = Long.toHexString(ThreadLocalRandom.current().nextLong());
    return replicas.appendAsync(key, List.of("+" + bufferedWriteKey + " " + now.toEpochMilli() + " " + id));
  }

  /**
   * Removes exactly {@code listings} (those of this partition), in one append, and rewrites the log when dead
   * lines outnumber live ones (or when pinned memory refuses the append: the rewrite shrinks the log).
   */
  void remove(Collection<Listing> listings) {
    if (listings.isEmpty()) {
      return;
    }
    List<String> lines = listings.stream().map(listing -> "-" + listing.bufferedKey() + " " + listing.id()).toList();
    try {
      if (!replicas.append(key, lines).isOk()) {
        compact(true);
        replicas.append(key, lines); // fits now, or the listings stay: a listing without a buffered write is harmless
        return;
      }
      compact(false);
    } catch (IqConnectionException unconfirmed) {
      // The buffered writes are already deleted, so the listings may stay (a later drain of this partition finds
      // nothing buffered for them and removes them then); failing the drain here would report applied writes as
      // failed. Seen when a replica's server died during the removal and the repair had already given its copies
      // to a substitute that the append did not reach (docs/write-back.md, finding 10).
      log.debug("listings {} stay in {} until a later drain: {}", lines, key, unconfirmed.toString());
    }
  }

  /** Rewrites each replica to the live listings unless that replica changed since it was read. */
  private void compact(boolean evenIfSmall) {
    Map<ServerAddress, CacheValue> copies = replicas.getAllOnEach(List.of(key)).getOrDefault(key, Map.of());
    List<String> all = copies.values().stream().flatMap(copy -> PinnedLines.lines(copy.data()).stream()).toList();
    List<Listing> live = live(all);
    int longest = copies.values().stream().mapToInt(copy -> PinnedLines.lines(copy.data()).size()).max().orElse(0);
    if (!evenIfSmall && longest <= 2 * live.size() + COMPACTION_SLACK) {
      return;
    }
    StringBuilder compacted = new StringBuilder();
    live.forEach(listing -> compacted.append('+').append(listing.bufferedKey()).append(' ')
        .append(listing.since().toEpochMilli()).append(' ').append(listing.id()).append('\n'));
    byte[] value = compacted.toString().getBytes(StandardCharsets.UTF_8);
    // A replica that took an append since it was read refuses (EXISTS) and keeps its longer, still valid log.
    copies.forEach((server, copy) -> replicas.casOn(server, key, value, copy.cas()));
  }

  /** The listings {@code lines} add and do not remove, in the order they were added. */
  static List<Listing> live(List<String> lines) {
    Map<String, Listing> added = new LinkedHashMap<>();
    Set<String> removed = new HashSet<>();
    for (String line : lines) {
      String[] words = line.substring(1).split(" ");
      if (line.charAt(0) == '-') {
        removed.add(words[0] + " " + (words.length > 1 ? words[1] : ""));
      } else if (line.charAt(0) == '+') {
        String id = words.length > 2 ? words[2] : "";
        added.putIfAbsent(words[0] + " " + id,
            new Listing(words[0], id, Instant.ofEpochMilli(Long.parseLong(words[1]))));
      }
    }
    removed.forEach(added::remove);
    return new ArrayList<>(added.values());
  }

  /** The live listings of each of {@code bufferedWriteKeys}, grouped by the partition that holds them. */
  static Map<PendingWritesPartition, List<Listing>> listingsOf(PinnedReplicas replicas,
      List<PendingWritesPartition> partitions, Collection<String> bufferedWriteKeys) {
    Map<PendingWritesPartition, Set<String>> wanted = new LinkedHashMap<>();
    bufferedWriteKeys.forEach(bufferedKey -> wanted.computeIfAbsent(
        partitions.get(indexOf(bufferedKey, partitions.size())), p -> new HashSet<>()).add(bufferedKey));
    Map<String, PendingWritesPartition> byKey = new HashMap<>();
    wanted.keySet().forEach(partition -> byKey.put(partition.key, partition));
    Map<String, Map<ServerAddress, CacheValue>> logs = replicas.getAllOnEach(byKey.keySet());
    Map<PendingWritesPartition, List<Listing>> found = new LinkedHashMap<>();
    logs.forEach((partitionKey, copies) -> {
      PendingWritesPartition partition = byKey.get(partitionKey);
      List<Listing> mine = live(copies.values().stream().flatMap(copy -> PinnedLines.lines(copy.data()).stream())
          .toList()).stream().filter(listing -> wanted.get(partition).contains(listing.bufferedKey())).toList();
      if (!mine.isEmpty()) {
        found.put(partition, mine);
      }
    });
    return found;
  }
}
