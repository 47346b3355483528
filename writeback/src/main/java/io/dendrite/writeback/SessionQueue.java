package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import java.time.Instant;
import java.util.List;

/**
 * One of Design 2's queues, {@code SessionQueue:<name>}: the ids of buffered sessions in the order they committed,
 * pinned and replicated, one line {@code <session id> <epoch millis committed>} each. Whoever commits to it,
 * drains it, or applies part of it for a read holds its {@link ExclusiveLease} throughout, which is what makes the
 * line order the commit order and lets one applier at a time walk it front to back.
 */
final class SessionQueue {
  private final IqClient cache;
  private final PinnedLines lines;
  private final String name;

  SessionQueue(IqClient cache, PinnedReplicas replicas, String name) {
    this.cache = cache;
    this.lines = new PinnedLines(cache, replicas, "SessionQueue:" + name);
    this.name = name;
  }

  String name() {
    return name;
  }

  /** The cache key of the queue. */
  String key() {
    return lines.key();
  }

  /** A queued session and when it committed. */
  record Entry(String sessionId, Instant since) {
    String line() {
      return sessionId + " " + since.toEpochMilli();
    }
  }

  /** Takes the queue's lease (waiting while another holder keeps it). */
  ExclusiveLease lease() {
    return ExclusiveLease.acquire(cache, lines.key());
  }

  /** The queued sessions, oldest first; exact under the queue's lease, a possibly stale snapshot without. */
  List<Entry> entries() {
    return lines.read().stream().map(line -> {
      int space = line.indexOf(' ');
      return new Entry(line.substring(0, space), Instant.ofEpochMilli(Long.parseLong(line.substring(space + 1))));
    }).toList();
  }

  /** Replaces the queue by {@code entries}, by the holder of {@code lease}; see {@link PinnedLines#rewrite}. */
  Outcome rewrite(ExclusiveLease lease, List<Entry> entries) {
    return lines.rewrite(lease, entries.stream().map(Entry::line).toList());
  }
}
