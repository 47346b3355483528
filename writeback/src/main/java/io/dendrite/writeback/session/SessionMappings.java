package io.dendrite.writeback.session;

import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.kernel.PinnedLines;
import io.dendrite.writeback.kernel.PinnedReplicas;
import java.util.Collection;
import java.util.List;

/**
 * Design 2's mappings (the thesis' Definition 3.2.3): for each row with pending sessions, {@code
 * SessionMap:<row>} lists their ids, pinned and replicated, so that a read of the row finds what it must apply
 * first. A committer adds its session, under the mapping's lock and its queue's, in the commit that queues it; an
 * applier removes sessions after it applied them. A line may outlive its session (an applier that lost its lease
 * or died between the two steps); readers treat a session that is no longer queued as applied and drop the line.
 */
final class SessionMappings {
  private final PinnedReplicas replicas;

  SessionMappings(PinnedReplicas replicas) {
    this.replicas = replicas;
  }

  /** The cache key of {@code row}'s mapping. */
  static String key(EntityKey row) {
    return "SessionMap:" + BufferedWriteKey.of(row);
  }

  /** The ids of sessions mapped to {@code row} (a lock-free snapshot). */
  List<String> sessions(EntityKey row) {
    return PinnedLines.read(replicas, key(row));
  }

  /** The mapping's value with {@code sessionId} added (once) to {@code value} ({@code null} when absent). */
  static byte[] adding(byte[] value, String sessionId) {
    List<String> sessionIds = PinnedLines.lines(value);
    if (!sessionIds.contains(sessionId)) {
      sessionIds.add(sessionId);
    }
    return PinnedLines.value(sessionIds);
  }

  /** The mapping's value without {@code sessionIds}; {@code null} (delete it) when none is left. */
  static byte[] removing(byte[] value, Collection<String> sessionIds) {
    List<String> left = PinnedLines.lines(value);
    left.removeAll(sessionIds);
    return PinnedLines.value(left);
  }
}
