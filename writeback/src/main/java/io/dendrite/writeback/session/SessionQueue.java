package io.dendrite.writeback.session;

import io.dendrite.writeback.kernel.BufferedWriteLocks;
import io.dendrite.writeback.kernel.FirstWarnings;
import io.dendrite.writeback.kernel.PinnedLines;
import io.dendrite.writeback.kernel.PinnedReplicas;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of Design 2's queues, {@code SessionQueue:<name>}: the ids of buffered sessions in the order they committed,
 * pinned and replicated, one line {@code <session id> <epoch millis committed>} each. Whoever commits to it, drains
 * it, or applies part of it for a read locks it ({@link BufferedWriteLocks#replicaLeases}, the Q lease on each of
 * its replicas) and changes it by a commit the servers fence, which is what makes the line order the commit order
 * and lets one applier at a time walk it front to back.
 */
final class SessionQueue {
  private static final Logger log = LoggerFactory.getLogger(SessionQueue.class);
  private static final FirstWarnings UNREADABLE = new FirstWarnings(log, 20);

  private final PinnedReplicas replicas;
  private final String name;

  SessionQueue(PinnedReplicas replicas, String name) {
    this.replicas = replicas;
    this.name = name;
  }

  String name() {
    return name;
  }

  /** The cache key of the queue. */
  String key() {
    return "SessionQueue:" + name;
  }

  /** A queued session and when it committed. */
  record Entry(String sessionId, Instant since) {
    String line() {
      return sessionId + " " + since.toEpochMilli();
    }
  }

  /** The queued sessions, oldest first: a lock-free snapshot that may be stale. */
  List<Entry> entries() {
    return entries(replicas.get(key()).orElse(null));
  }

  /** The sessions queued in {@code value} (the queue's value, {@code null} when absent), oldest first; mutable. */
  static List<Entry> entries(byte[] value) {
    List<Entry> entries = new ArrayList<>();
    for (String line : PinnedLines.lines(value)) {
      int space = line.indexOf(' ');
      Instant queuedAt;
      try {
        queuedAt = Instant.ofEpochMilli(Long.parseLong(line.substring(space + 1)));
      } catch (NumberFormatException | IndexOutOfBoundsException notOurs) {
        // A line no engine wrote (another client's, or damage): failing on it would stop every
        // apply of the queue for good. It holds no session, and the next rewrite drops it.
        UNREADABLE.warn("skipping a session-queue line that names no session: {}", line);
        continue;
      }
      if (space <= 0) {
        continue;
      }
      entries.add(new Entry(line.substring(0, space), queuedAt));
    }
    return entries;
  }

  /** The queue's value holding {@code entries}; {@code null} (delete it) when there are none. */
  static byte[] value(List<Entry> entries) {
    return PinnedLines.value(entries.stream().map(Entry::line).toList());
  }
}
