package io.dendrite.writeback.store;

import io.dendrite.writeback.change.EntityChanges;
import java.time.Instant;
import java.util.Collection;
import java.util.List;

/**
 * A {@link DataStore} that applies a session's changes exactly once: it records the session's id in the same
 * transaction as the changes (the {@code AppliedSessions} table of the write-back thesis' Design 2), so a session
 * applied again, by an applier that took over from one that died after the commit, changes nothing. What {@link
 * io.dendrite.writeback.session.SessionWriteBack} applies sessions through; {@code MySqlStore}
 * ({@code dendrite-store-mysql}) is one.
 *
 * <p>An interface rather than the MySQL store itself, so that write-back does not depend on a JDBC driver or a
 * connection pool: the store modules depend on write-back, never the other way.
 */
public interface SessionStore extends DataStore {

  /**
   * Applies a session's changes unless that session was applied before, in one transaction with the record that
   * it was applied.
   *
   * @param sessionId the session's unique id, at most 128 characters
   * @return true if the changes were applied now, false if the session had been applied already
   */
  boolean applyOnce(String sessionId, List<EntityChanges> batch);

  /**
   * Ids of sessions recorded as applied before {@code appliedBefore}, in id order after {@code afterId}, at most
   * {@code limit}: a page for a compaction that decides per id whether it may be forgotten.
   */
  List<String> appliedSessionIds(Instant appliedBefore, String afterId, int limit);

  /**
   * Deletes the records of these sessions. Call it only for sessions that can never be applied again (no copy of
   * their changes is left to apply), or such a session would apply twice.
   *
   * @return how many records were deleted
   */
  int forgetAppliedSessions(Collection<String> sessionIds);

  /**
   * Checks, before anything is sent, that {@link #applyOnce} could take {@code batch}, so that a session the store
   * would refuse is refused when it is committed rather than when it is drained.
   *
   * @throws IllegalArgumentException naming the first problem
   */
  void checkAppliable(List<EntityChanges> batch);
}
