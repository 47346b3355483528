package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.ServerCommands;
import io.dendrite.iq.client.WriteOptions;
import io.dendrite.writeback.change.EntityKey;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
public final class PendingWritesPartition {
  private static final Logger log = LoggerFactory.getLogger(PendingWritesPartition.class);

  /** Lines no engine wrote are read again every drain round until compaction drops them: warned of a few times. */
  private static final FirstWarnings UNREADABLE = new FirstWarnings(log, 20);

  /** A rewrite is due when the log holds this many more lines than twice the live listings. */
  private static final int COMPACTION_SLACK = 64;

  private final PinnedReplicas replicas;
  private final String key;

  public PendingWritesPartition(PinnedReplicas replicas, int index) {
    this(replicas, String.valueOf(index));
  }

  /** The partition {@code PendingWrites:<name>} (a range-owned engine's are {@code <range>:<index>}). */
  public PendingWritesPartition(PinnedReplicas replicas, String name) {
    this.replicas = replicas;
    this.key = "PendingWrites:" + name;
  }

  /** The cache key of this partition's log. */
  public String key() {
    return key;
  }

  /**
   * Records in the cache tier how many partitions list the buffered writes named {@code names} ({@code
   * PendingWrites:<names>partitions}, pinned on each of the R replica servers of that key), or refuses a count other
   * than the one recorded. A listing's partition is its key's hash modulo the count, so an engine with another count
   * would look for the listings it drains in the wrong partitions: it would never remove them (a drain that never
   * ends) and would never see partitions above its own count (writes that are never drained). A replica server that
   * does not answer is passed over (an engine starts while one cache server is down, as its writes do); one that
   * restarted empty records the count again.
   *
   * @param what whose listings these are, for the refusal ("write-back's", "TARDIS's")
   * @throws IllegalStateException when a replica server records another partition count
   * @throws IqConnectionException when no replica server of the record answered
   */
  public static void claimCount(
      PinnedReplicas replicas, String names, int partitionCount, String what) {
    String countKey = "PendingWrites:" + names + "partitions";
    byte[] mine = Integer.toString(partitionCount).getBytes(StandardCharsets.US_ASCII);
    ServerCommands servers = replicas.cache().servers();
    IqConnectionException unanswered = null;
    boolean answered = false;
    for (ServerAddress server : replicas.serversFor(countKey)) {
      try {
        if (!servers.addOn(server, countKey, mine, WriteOptions.PINNED).isOk()) {
          Optional<CacheValue> recorded = servers.getOn(server, countKey);
          if (recorded.isPresent() && !Arrays.equals(recorded.get().data(), mine)) {
            throw new IllegalStateException(
                "this cache tier lists "
                    + what
                    + " buffered writes in "
                    + new String(recorded.get().data(), StandardCharsets.US_ASCII)
                    + " partitions (recorded under "
                    + countKey
                    + " on "
                    + server
                    + "), and this engine was built with "
                    + partitionCount
                    + ": every engine over the same buffered writes must use the same partitions,"
                    + " or it could neither find nor finish draining what the others listed");
          }
        }
        answered = true;
      } catch (IqConnectionException down) {
        unanswered = down;
      }
    }
    if (!answered && unanswered != null) {
      throw unanswered;
    }
  }

  /** The partition, of {@code partitionCount}, that lists {@code bufferedWriteKey}. */
  public static int indexOf(String bufferedWriteKey, int partitionCount) {
    return Math.floorMod(bufferedWriteKey.hashCode(), partitionCount);
  }

  /** A document with a buffered write and when its oldest live listing was added. */
  public record Entry(EntityKey key, Instant since) {}

  /** One listing: a line {@code +<bufferedKey> <since> <id>} not yet removed. */
  public record Listing(String bufferedKey, String id, Instant since) {}

  /** The documents listed in {@code partitions}, oldest listing first, read in one batch (a lock-free snapshot). */
  public static List<Entry> entries(
      PinnedReplicas replicas, List<PendingWritesPartition> partitions) {
    return entriesOf(listings(replicas, partitions));
  }

  /**
   * The documents {@code listings} name, oldest listing first. A listing whose key is not a buffered write's (a line
   * no engine wrote: another client's, or damaged) is passed over with a warning instead of failing the read, which
   * would stop every drain of the partition for good.
   */
  static List<Entry> entriesOf(List<Listing> listings) {
    return distinctEntries(listings).stream().sorted(Comparator.comparing(Entry::since)).toList();
  }

  /** How many documents {@code partitions} list, and the oldest listing: {@link #entries}, without sorting. */
  public static Backlog backlog(PinnedReplicas replicas, List<PendingWritesPartition> partitions) {
    Collection<Entry> entries = distinctEntries(listings(replicas, partitions));
    return new Backlog(
        entries.size(), entries.stream().map(Entry::since).min(Comparator.naturalOrder()));
  }

  /** A backlog's size: documents listed, and since when the oldest is. */
  public record Backlog(int documents, Optional<Instant> oldest) {}

  /**
   * The listed documents of each of {@code partitions} that lists any, keyed by its index there (one batched read of
   * them all), in no order: for a worker that samples one partition's documents, so that its batch touches one log.
   */
  public static Map<Integer, List<Entry>> entriesByPartition(
      PinnedReplicas replicas, List<PendingWritesPartition> partitions) {
    Map<String, List<Listing>> listings = listingsByPartition(replicas, partitions);
    Map<Integer, List<Entry>> byPartition = new LinkedHashMap<>();
    for (int index = 0; index < partitions.size(); index++) {
      Collection<Entry> entries =
          distinctEntries(listings.getOrDefault(partitions.get(index).key, List.of()));
      if (!entries.isEmpty()) {
        byPartition.put(index, List.copyOf(entries));
      }
    }
    return byPartition;
  }

  private static Collection<Entry> distinctEntries(List<Listing> listings) {
    Map<String, Entry> byKey = new LinkedHashMap<>();
    for (Listing listing : listings) {
      EntityKey key;
      try {
        key = BufferedWriteKey.parse(listing.bufferedKey());
      } catch (IllegalArgumentException notABufferedWrite) {
        warnUnreadable(listing.bufferedKey(), notABufferedWrite);
        continue;
      }
      byKey.merge(
          listing.bufferedKey(),
          new Entry(key, listing.since()),
          (a, b) -> a.since().isAfter(b.since()) ? b : a);
    }
    return byKey.values();
  }

  private static void warnUnreadable(String line, Exception why) {
    UNREADABLE.warn(
        "skipping a pending-writes listing that names no buffered write: {} ({})",
        line,
        why.getMessage());
  }

  /** The live listings of {@code partitions}, merged over every reachable replica, in one batch of reads. */
  public static List<Listing> listings(
      PinnedReplicas replicas, Collection<PendingWritesPartition> partitions) {
    List<Listing> listings = new ArrayList<>();
    listingsByPartition(replicas, partitions).values().forEach(listings::addAll);
    return listings;
  }

  /** The live listings of each of {@code partitions} that some replica holds, keyed by the partition's key. */
  private static Map<String, List<Listing>> listingsByPartition(
      PinnedReplicas replicas, Collection<PendingWritesPartition> partitions) {
    Map<String, Map<ServerAddress, CacheValue>> logs =
        replicas.getAllOnEach(
            partitions.stream().map(partition -> partition.key).distinct().toList());
    Map<String, List<Listing>> listings = new LinkedHashMap<>();
    logs.forEach((key, copies) -> listings.put(key, Log.of(copies.values()).live()));
    return listings;
  }

  /** The listed documents, oldest first (a lock-free snapshot). */
  public List<Entry> entries() {
    return entries(replicas, List.of(this));
  }

  /**
   * Lists {@code bufferedWriteKey} with a new listing.
   *
   * @return {@link Outcome#OK}, or the refusal (e.g. {@link Outcome#PINNED_MEMORY_FULL}) of the pinned append
   */
  public Outcome add(String bufferedWriteKey, Instant now) {
    return addAsync(bufferedWriteKey, now).await();
  }

  /** {@link #add}, sent now. */
  public PinnedReplicas.Sent<Outcome> addAsync(String bufferedWriteKey, Instant now) {
    String id = Long.toHexString(ThreadLocalRandom.current().nextLong());
    return replicas.appendAsync(
        key, List.of("+" + bufferedWriteKey + " " + now.toEpochMilli() + " " + id));
  }

  /**
   * Removes exactly {@code listings} (those of this partition, read in {@code read}), in one append, and rewrites
   * the log when dead lines outnumber live ones (or when pinned memory refuses the append: the rewrite shrinks the
   * log). Whether a rewrite may be due is judged from {@code read}'s counts, so a removal reads the log again only
   * then: most drains never pay a second read and parse of the whole log.
   */
  public void remove(Collection<Listing> listings, Log read) {
    removeAsync(listings, read).run();
  }

  /**
   * {@link #remove}, its append sent now; the returned step waits for it and compacts or retries as {@code remove}
   * does. A drain sends the removals of all its partitions before it waits for any: one round trip, not one per
   * partition.
   */
  public Runnable removeAsync(Collection<Listing> listings, Log read) {
    if (listings.isEmpty()) {
      return () -> {};
    }
    List<String> lines =
        listings.stream().map(listing -> "-" + listing.bufferedKey() + " " + listing.id()).toList();
    PinnedReplicas.Sent<Outcome> appended;
    try {
      appended = replicas.appendAsync(key, lines);
    } catch (IqConnectionException unsent) {
      return () ->
          log.debug(
              "listings {} stay in {} until a later drain: {}", lines, key, unsent.toString());
    }
    return () -> {
      try {
        if (!appended.await().isOk()) {
          compact(true);
          replicas.append(
              key, lines); // fits now, or the listings stay: a listing without a buffered write is
          // harmless
          return;
        }
        if (rewriteDue(read.longestCopy() + lines.size(), read.live().size() - lines.size())) {
          compact(false);
        }
      } catch (IqConnectionException unconfirmed) {
        // The buffered writes are already deleted, so the listings may stay (a later drain of this
        // partition finds nothing buffered for them and removes them then); failing the drain here
        // would report applied writes as failed. Seen when a replica's server died during the
        // removal and the repair had already given its copies to a substitute that the append did
        // not reach (docs/write-back.md, finding 10).
        log.debug(
            "listings {} stay in {} until a later drain: {}", lines, key, unconfirmed.toString());
      }
    };
  }

  private static boolean rewriteDue(int longestCopy, int live) {
    return longestCopy > 2 * Math.max(live, 0) + COMPACTION_SLACK;
  }

  /** Rewrites each replica to the live listings unless that replica changed since it was read. */
  private void compact(boolean evenIfSmall) {
    Map<ServerAddress, CacheValue> copies =
        replicas.getAllOnEach(List.of(key)).getOrDefault(key, Map.of());
    Log read = Log.of(copies.values());
    List<Listing> live = read.live();
    if (!evenIfSmall && !rewriteDue(read.longestCopy(), live.size())) {
      return;
    }
    StringBuilder compacted = new StringBuilder();
    live.forEach(
        listing ->
            compacted
                .append('+')
                .append(listing.bufferedKey())
                .append(' ')
                .append(listing.since().toEpochMilli())
                .append(' ')
                .append(listing.id())
                .append('\n'));
    byte[] value = compacted.toString().getBytes(StandardCharsets.UTF_8);
    // A replica that took an append since it was read refuses (EXISTS) and keeps its longer, still
    // valid log.
    copies.forEach((server, copy) -> replicas.casOn(server, key, value, copy.cas()));
  }

  /**
   * A partition's log as read from its replicas: the live listings merged over every copy, in the order they were
   * added, and the number of lines in the longest copy (what a rewrite would shrink).
   */
  public record Log(List<Listing> live, int longestCopy) {
    /**
     * Parses {@code copies} (one per replica) straight from their bytes. Copies equal to one already parsed are
     * skipped, the usual case: replicas take the same appends, mostly in the same order.
     */
    public static Log of(Collection<CacheValue> copies) {
      Map<ListingId, Listing> added = new LinkedHashMap<>();
      Set<ListingId> removed = new HashSet<>();
      List<byte[]> parsed = new ArrayList<>(copies.size());
      int longest = 0;
      for (CacheValue copy : copies) {
        byte[] data = copy.data();
        if (parsed.stream().anyMatch(other -> Arrays.equals(other, data))) {
          continue;
        }
        parsed.add(data);
        longest = Math.max(longest, parseLines(data, added, removed));
      }
      removed.forEach(added::remove);
      return new Log(new ArrayList<>(added.values()), longest);
    }

    /** Parses the lines of one copy into {@code added} and {@code removed}; returns how many lines it holds. */
    private static int parseLines(
        byte[] data, Map<ListingId, Listing> added, Set<ListingId> removed) {
      int lines = 0;
      int start = 0;
      while (start < data.length) {
        int end = indexOf(data, (byte) '\n', start, data.length);
        if (end > start) {
          lines++;
          parseLine(data, start, end, added, removed);
        }
        start = end + 1;
      }
      return lines;
    }

    /** {@code +<key> <since> <id>} or {@code -<key> <id>}, in {@code data[start, end)}. */
    private static void parseLine(
        byte[] data, int start, int end, Map<ListingId, Listing> added, Set<ListingId> removed) {
      byte kind = data[start];
      if (kind != '+' && kind != '-') {
        return;
      }
      int keyEnd = indexOf(data, (byte) ' ', start + 1, end);
      String bufferedKey = text(data, start + 1, keyEnd);
      int secondEnd = Math.min(indexOf(data, (byte) ' ', keyEnd + 1, end), end);
      if (kind == '-') {
        removed.add(new ListingId(bufferedKey, text(data, keyEnd + 1, secondEnd)));
        return;
      }
      String id = text(data, secondEnd + 1, end);
      ListingId listingId = new ListingId(bufferedKey, id);
      if (!added.containsKey(listingId)) {
        long since;
        try {
          since = Long.parseLong(text(data, keyEnd + 1, secondEnd));
        } catch (NumberFormatException unreadable) {
          // Not a line an engine wrote: skipped, so that it cannot stop the partition's drains.
          warnUnreadable(text(data, start, end), unreadable);
          return;
        }
        added.put(listingId, new Listing(bufferedKey, id, Instant.ofEpochMilli(since)));
      }
    }

    /** The first {@code b} in {@code data[from, to)}, else {@code to}. */
    private static int indexOf(byte[] data, byte b, int from, int to) {
      for (int i = from; i < to; i++) {
        if (data[i] == b) {
          return i;
        }
      }
      return to;
    }

    /** The text in {@code data[from, to)}; empty where the line ended before it. */
    private static String text(byte[] data, int from, int to) {
      return from >= to ? "" : new String(data, from, to - from, StandardCharsets.UTF_8);
    }
  }

  /** What a removal names: one listing of one buffered write. */
  private record ListingId(String bufferedKey, String id) {}

  /**
   * The live listings of each of {@code bufferedWriteKeys}, grouped by the partition that holds them, with each
   * partition's whole log as read (for {@link #remove(Collection, Log)}).
   */
  public static Map<PendingWritesPartition, Found> listingsOf(
      PinnedReplicas replicas,
      List<PendingWritesPartition> partitions,
      Collection<String> bufferedWriteKeys) {
    Map<PendingWritesPartition, Set<String>> wanted = new LinkedHashMap<>();
    bufferedWriteKeys.forEach(
        bufferedKey ->
            wanted
                .computeIfAbsent(
                    partitions.get(indexOf(bufferedKey, partitions.size())), p -> new HashSet<>())
                .add(bufferedKey));
    Map<String, PendingWritesPartition> byKey = new HashMap<>();
    wanted.keySet().forEach(partition -> byKey.put(partition.key, partition));
    Map<String, Map<ServerAddress, CacheValue>> logs = replicas.getAllOnEach(byKey.keySet());
    Map<PendingWritesPartition, Found> found = new LinkedHashMap<>();
    logs.forEach(
        (partitionKey, copies) -> {
          PendingWritesPartition partition = byKey.get(partitionKey);
          Log read = Log.of(copies.values());
          List<Listing> mine =
              read.live().stream()
                  .filter(listing -> wanted.get(partition).contains(listing.bufferedKey()))
                  .toList();
          if (!mine.isEmpty()) {
            found.put(partition, new Found(mine, read));
          }
        });
    return found;
  }

  /** The listings a drain looked for in one partition, and that partition's log as read. */
  public record Found(List<Listing> listings, Log read) {}
}
