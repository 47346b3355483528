package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A list of text lines pinned on R servers at one key and rewritten whole: the shape of every index the write-back
 * engines keep in the cache (pending-writes partitions, session queues, session mappings). Reads take no lease and
 * may be stale; changes run under the key's {@link ExclusiveLease}, either one this class takes ({@link
 * #addUnlessPresent}, {@link #removeIf}) or one the caller already holds ({@link #rewrite}).
 */
final class PinnedLines {
  private final IqClient cache;
  private final PinnedReplicas replicas;
  private final String key;

  PinnedLines(IqClient cache, PinnedReplicas replicas, String key) {
    this.cache = cache;
    this.replicas = replicas;
    this.key = key;
  }

  String key() {
    return key;
  }

  /** The lines now, in order (a lease-free snapshot). */
  List<String> read() {
    return read(replicas, key);
  }

  /** The non-empty lines of the replicated value at {@code key} now (a lock-free snapshot; none if it is absent). */
  static List<String> read(PinnedReplicas replicas, String key) {
    return replicas.get(key).map(PinnedLines::lines).orElseGet(ArrayList::new);
  }

  /** The non-empty lines of {@code value}, a mutable list. */
  static List<String> lines(byte[] value) {
    List<String> lines = new ArrayList<>();
    for (String line : new String(value, StandardCharsets.UTF_8).split("\n")) {
      if (!line.isEmpty()) {
        lines.add(line);
      }
    }
    return lines;
  }

  /**
   * Appends {@code line} under the key's lease unless a line matching {@code present} is there already.
   *
   * @return {@link Outcome#OK}, or the refusal (e.g. {@link Outcome#PINNED_MEMORY_FULL}) of the pinned set
   */
  Outcome addUnlessPresent(String line, Predicate<String> present) {
    try (ExclusiveLease lease = ExclusiveLease.acquire(cache, key)) {
      List<String> lines = read();
      if (lines.stream().anyMatch(present)) {
        return Outcome.OK;
      }
      lines.add(line);
      return rewrite(lease, lines);
    }
  }

  /**
   * Writes the list again, under the key's lease, to every replica, if a replica on a server that is not down lacks
   * it: gives back the copy a restarted server lost.
   *
   * @return 1 if it was written again, 0 if every live replica held it (or there is none)
   * @throws IqException when a replica refused it
   */
  int restoreReplicas() {
    if (replicas.lackingACopy(List.of(key)).isEmpty()) {
      return 0;
    }
    try (ExclusiveLease lease = ExclusiveLease.acquire(cache, key)) {
      List<String> lines = read();
      if (lines.isEmpty()) {
        return 0;
      }
      Outcome outcome = rewrite(lease, lines);
      if (!outcome.isOk()) {
        throw new IqException("could not restore " + key + ": " + outcome);
      }
      return 1;
    }
  }

  /** Removes the lines matching {@code remove} under the key's lease. */
  void removeIf(Predicate<String> remove) {
    try (ExclusiveLease lease = ExclusiveLease.acquire(cache, key)) {
      List<String> lines = read();
      if (!lines.removeIf(remove)) {
        return;
      }
      // Shrinking a pinned value frees quota, so only a lost server can refuse it, and that throws.
      Outcome outcome = rewrite(lease, lines);
      if (!outcome.isOk()) {
        throw new IqException("could not rewrite " + key + ": " + outcome);
      }
    }
  }

  /**
   * Replaces the list by {@code lines} (deleting the key when there are none), by a caller that holds the key's
   * lease.
   *
   * @return {@link Outcome#OK}, or the refusal of the pinned set; some replicas may then hold the new list
   * @throws ExclusiveLease.LeaseLostException when the lease was lost; nothing was changed
   */
  Outcome rewrite(ExclusiveLease lease, List<String> lines) {
    lease.ensureHeld();
    if (lines.isEmpty()) {
      replicas.delete(key);
      return Outcome.OK;
    }
    return replicas.set(key, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
  }
}
