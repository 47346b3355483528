package io.dendrite.writeback.session;

import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Names of Design 2's sessions: a session id is {@code <queue>/<random UUID>}, so the id alone says which queue
 * orders it, and its session object lives at {@code Session:<id>}. Queue names are short plain tokens because they
 * become part of cache keys (no spaces or control characters) and of ids in {@code dendrite_applied_sessions}
 * (at most 128 characters).
 */
final class SessionIds {
  static final int MAX_QUEUE_NAME_LENGTH = 64;
  private static final Pattern QUEUE_NAME =
      Pattern.compile("[A-Za-z0-9_.-]{1," + MAX_QUEUE_NAME_LENGTH + "}");

  private SessionIds() {}

  /** A fresh, unique session id in {@code queue}. */
  static String next(String queue) {
    return queue + "/" + UUID.randomUUID();
  }

  /** The queue of a session id made by {@link #next}; empty when {@code sessionId} was not made by it. */
  static String queueOf(String sessionId) {
    int slash = sessionId.indexOf('/');
    return slash < 0 ? "" : sessionId.substring(0, slash);
  }

  /** The cache key of a session's buffered changes. */
  static String objectKey(String sessionId) {
    return "Session:" + sessionId;
  }

  /** @throws IllegalArgumentException when {@code name} cannot name a queue */
  static String checkQueueName(String name) {
    if (name == null || !QUEUE_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "a queue name must be 1 to "
              + MAX_QUEUE_NAME_LENGTH
              + " letters, digits, '_', '.' or '-', got "
              + (name == null ? "null" : "\"" + name + "\""));
    }
    return name;
  }
}
