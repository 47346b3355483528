package io.dendrite.core.log;

import java.util.Optional;

/**
 * One change to a range's interval index, as the CPR paper logs it: {@code insert:LSN:lb:ub:key} when
 * a cached result set's interval enters PrInT, {@code delete:LSN:lb:ub} when it leaves, and — for
 * result sets cached as points — {@code cover:LSN:lb:ub} / {@code uncover:LSN:lb:ub} when an interval
 * becomes (or stops being) completely cached. Bounds are in their {@code DomainType} text form, which
 * holds no colon; the key is the last field and may hold colons.
 *
 * @param action what happened
 * @param lsn the log sequence number: records of one range are replayed in LSN order
 * @param lowerBound the interval's lower bound, text form
 * @param upperBound the interval's upper bound, text form
 * @param key the cache key, for {@link Action#INSERT} only
 */
public record LogRecord(
    Action action, long lsn, String lowerBound, String upperBound, Optional<String> key) {

  /** The kinds of record. */
  public enum Action {
    /** A result set's interval entered the index. */
    INSERT,
    /** A result set's interval left the index. */
    DELETE,
    /** An interval became completely cached as points. */
    COVER,
    /** An interval stopped being completely cached. */
    UNCOVER;

    String word() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** Validates the record's shape. */
  public LogRecord {
    if ((action == Action.INSERT) != key.isPresent()) {
      throw new IllegalArgumentException("only insert records carry a key: " + action + " " + key);
    }
    if (lowerBound.contains(":") || upperBound.contains(":")) {
      throw new IllegalArgumentException(
          "bounds must not hold a colon: " + lowerBound + ", " + upperBound);
    }
  }

  /** The record's line, without the line break. */
  public String toLine() {
    return action.word()
        + ":"
        + lsn
        + ":"
        + lowerBound
        + ":"
        + upperBound
        + key.map(k -> ":" + k).orElse("");
  }

  /**
   * Reads a line written by {@link #toLine}.
   *
   * @return empty if the line is not a log record (a torn append, for example)
   */
  public static Optional<LogRecord> parse(String line) {
    String[] fields = line.split(":", 5);
    if (fields.length < 4) {
      return Optional.empty();
    }
    Action action;
    long lsn;
    try {
      action = Action.valueOf(fields[0].toUpperCase(java.util.Locale.ROOT));
      lsn = Long.parseLong(fields[1]);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    boolean hasKey = fields.length == 5;
    if ((action == Action.INSERT) != hasKey || (hasKey && fields[4].isEmpty())) {
      return Optional.empty();
    }
    return Optional.of(
        new LogRecord(
            action, lsn, fields[2], fields[3], hasKey ? Optional.of(fields[4]) : Optional.empty()));
  }
}
