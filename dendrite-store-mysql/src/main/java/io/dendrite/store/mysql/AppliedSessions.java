package io.dendrite.store.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/**
 * The {@code AppliedSessions} table of the thesis' Design 2: the ids of sessions whose changes were committed,
 * written in the same transaction as those changes, so that a session applied again is applied once.
 *
 * <p>Claiming inserts the id first, before the changes: a concurrent applier of the same session blocks on the
 * row lock until the first one commits (then fails on the duplicate key) or rolls back (then proceeds), so no
 * check-then-insert race exists. Times are the applier's clock in epoch milliseconds, free of time zones.
 */
final class AppliedSessions {
  static final String TABLE = "dendrite_applied_sessions";
  static final int MAX_SESSION_ID_LENGTH = 128;

  private volatile boolean tableExists;

  /** Creates the table if needed. DDL commits implicitly in MySQL, so this runs outside any change transaction. */
  void ensureTable(Connection connection) throws SQLException {
    if (tableExists) {
      return;
    }
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE IF NOT EXISTS `"
              + TABLE
              + "` (session_id VARCHAR("
              + MAX_SESSION_ID_LENGTH
              + ") NOT NULL PRIMARY KEY, applied_at_ms BIGINT NOT NULL,"
              + " INDEX (applied_at_ms))");
    }
    tableExists = true;
  }

  /**
   * Records {@code sessionId} in the caller's transaction.
   *
   * @return false when the session was already applied (the caller then applies nothing)
   */
  boolean claim(Connection connection, String sessionId, Instant now) throws SQLException {
    try (PreparedStatement insert =
        connection.prepareStatement(
            "INSERT INTO `" + TABLE + "` (session_id, applied_at_ms) VALUES (?, ?)")) {
      insert.setString(1, sessionId);
      insert.setLong(2, now.toEpochMilli());
      insert.executeUpdate();
      return true;
    } catch (SQLIntegrityConstraintViolationException duplicate) {
      return false;
    }
  }

  /** Deletes the records of sessions applied before {@code cutoff}; returns how many. */
  int forgetBefore(Connection connection, Instant cutoff) throws SQLException {
    try (PreparedStatement delete =
        connection.prepareStatement("DELETE FROM `" + TABLE + "` WHERE applied_at_ms < ?")) {
      delete.setLong(1, cutoff.toEpochMilli());
      return delete.executeUpdate();
    }
  }

  /** Up to {@code limit} ids applied before {@code cutoff} and greater than {@code afterId}, in id order. */
  List<String> idsBefore(Connection connection, Instant cutoff, String afterId, int limit)
      throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "SELECT session_id FROM `"
                + TABLE
                + "` WHERE applied_at_ms < ? AND session_id > ? ORDER BY session_id LIMIT ?")) {
      select.setLong(1, cutoff.toEpochMilli());
      select.setString(2, afterId);
      select.setInt(3, limit);
      List<String> ids = new ArrayList<>();
      try (ResultSet rows = select.executeQuery()) {
        while (rows.next()) {
          ids.add(rows.getString(1));
        }
      }
      return ids;
    }
  }

  /** Deletes the records of {@code sessionIds} in one statement (so pass a page); returns how many existed. */
  int forget(Connection connection, Collection<String> sessionIds) throws SQLException {
    String placeholders = String.join(", ", Collections.nCopies(sessionIds.size(), "?"));
    try (PreparedStatement delete =
        connection.prepareStatement(
            "DELETE FROM `" + TABLE + "` WHERE session_id IN (" + placeholders + ")")) {
      int index = 1;
      for (String sessionId : sessionIds) {
        delete.setString(index++, sessionId);
      }
      return delete.executeUpdate();
    }
  }

  static void checkSessionId(String sessionId) {
    if (sessionId == null || sessionId.isBlank() || sessionId.length() > MAX_SESSION_ID_LENGTH) {
      throw new IllegalArgumentException(
          "session id must be non-blank and at most "
              + MAX_SESSION_ID_LENGTH
              + " characters, got "
              + sessionId);
    }
  }
}
