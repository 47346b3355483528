package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.EntityKey;
import java.util.Collection;
import java.util.List;

/**
 * Design 2's mappings (the thesis' Definition 3.2.3): for each row with pending sessions, {@code
 * SessionMap:<row>} lists their ids, pinned and replicated, so that a read of the row finds what it must apply
 * first. A committer adds its session before it acknowledges; an applier removes sessions after it applied them.
 * A line may outlive its session (a crash between the two steps); readers treat a session that is no longer
 * queued as applied and drop the line.
 */
final class SessionMappings {
  private final IqClient cache;
  private final PinnedReplicas replicas;

  SessionMappings(IqClient cache, PinnedReplicas replicas) {
    this.cache = cache;
    this.replicas = replicas;
  }

  /** The ids of sessions mapped to {@code row} (a lease-free snapshot). */
  List<String> sessions(EntityKey row) {
    return lines(row).read();
  }

  /** @return {@link Outcome#OK}, or the pinned set's refusal */
  Outcome add(EntityKey row, String sessionId) {
    return lines(row).addUnlessPresent(sessionId, sessionId::equals);
  }

  void remove(EntityKey row, Collection<String> sessionIds) {
    lines(row).removeIf(sessionIds::contains);
  }

  /** Writes the row's mapping again to every replica, if a live one lacks it; returns 1 if it did. */
  int restoreReplicas(EntityKey row) {
    return lines(row).restoreReplicas();
  }

  private PinnedLines lines(EntityKey row) {
    return new PinnedLines(cache, replicas, "SessionMap:" + BufferedWriteKey.of(row));
  }
}
