package io.dendrite.writeback.kernel;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One change to BuWrInT, as {@link BufferedIntervalLog} keeps it: {@code i:<lsn>:<lb>:<ub>:<bw key> <bw key>...}
 * when the interval of a write enters the index with the keys of the buffered writes it went to, and
 * {@code r:<lsn>} when that entry leaves it because its buffered writes were applied. The LSN names the entry:
 * two writes on the same interval are two entries. Bounds are in their {@code DomainType} text form (no colon, no
 * space); buffered-write keys are memcached keys (no space) and come last, so they may hold colons.
 *
 * @param kind whether the entry entered or left the index
 * @param lsn the entry's log sequence number
 * @param lowerBound the interval's lower bound, text form ({@link Kind#INDEXED} only, else empty)
 * @param upperBound the interval's upper bound, text form ({@link Kind#INDEXED} only, else empty)
 * @param bufferedWriteKeys the keys of the entry's buffered writes, in the write's order ({@link Kind#INDEXED} only)
 */
record BufferedIntervalRecord(
    Kind kind, long lsn, String lowerBound, String upperBound, List<String> bufferedWriteKeys) {

  /** The kinds of record. */
  enum Kind {
    /** A write's interval entered BuWrInT. */
    INDEXED,
    /** The entry left BuWrInT: its buffered writes were applied. */
    REMOVED
  }

  /** Validates the record's shape, so that every record written can be read back. */
  BufferedIntervalRecord {
    bufferedWriteKeys = List.copyOf(bufferedWriteKeys);
    if (lsn < 1) {
      throw new IllegalArgumentException("lsn must be positive, got " + lsn);
    }
    if (kind == Kind.INDEXED) {
      if (bufferedWriteKeys.isEmpty() || lowerBound.isEmpty() || upperBound.isEmpty()) {
        throw new IllegalArgumentException(
            "an indexed record needs bounds and buffered-write keys");
      }
      if (hasSeparator(lowerBound, ":")
          || hasSeparator(upperBound, ":")
          || bufferedWriteKeys.stream().anyMatch(key -> key.isEmpty() || hasSeparator(key, ""))) {
        throw new IllegalArgumentException(
            "bounds must hold no colon and keys no space: "
                + lowerBound
                + ", "
                + upperBound
                + ", "
                + bufferedWriteKeys);
      }
    } else if (!bufferedWriteKeys.isEmpty() || !lowerBound.isEmpty() || !upperBound.isEmpty()) {
      throw new IllegalArgumentException("a removed record names its entry by LSN only");
    }
  }

  static BufferedIntervalRecord indexed(
      long lsn, String lowerBound, String upperBound, List<String> keys) {
    return new BufferedIntervalRecord(Kind.INDEXED, lsn, lowerBound, upperBound, keys);
  }

  static BufferedIntervalRecord removed(long lsn) {
    return new BufferedIntervalRecord(Kind.REMOVED, lsn, "", "", List.of());
  }

  /** The record's line, without the line break. */
  String toLine() {
    return kind == Kind.REMOVED
        ? "r:" + lsn
        : "i:"
            + lsn
            + ":"
            + lowerBound
            + ":"
            + upperBound
            + ":"
            + String.join(" ", bufferedWriteKeys);
  }

  /**
   * Reads a line written by {@link #toLine}.
   *
   * @return empty if the line is not a record (a torn append, for example)
   */
  static Optional<BufferedIntervalRecord> parse(String line) {
    String[] fields = line.split(":", 5);
    try {
      if (fields.length == 2 && fields[0].equals("r")) {
        return Optional.of(removed(Long.parseLong(fields[1])));
      }
      if (fields.length == 5 && fields[0].equals("i")) {
        return Optional.of(
            indexed(
                Long.parseLong(fields[1]), fields[2], fields[3], List.of(fields[4].split(" "))));
      }
    } catch (IllegalArgumentException notARecord) {
      // a bad number or shape: the line is not a record
    }
    return Optional.empty();
  }

  /**
   * The entries still in BuWrInT after replaying {@code records} (in any order, duplicates allowed, as a merge of
   * replicas gives them): every indexed record no removed record names, once each, in LSN order.
   */
  static List<BufferedIntervalRecord> live(Collection<BufferedIntervalRecord> records) {
    Set<Long> removed = new HashSet<>();
    for (BufferedIntervalRecord record : records) {
      if (record.kind == Kind.REMOVED) {
        removed.add(record.lsn);
      }
    }
    Set<Long> seen = new HashSet<>();
    List<BufferedIntervalRecord> live = new ArrayList<>();
    for (BufferedIntervalRecord record : records) {
      if (record.kind == Kind.INDEXED && !removed.contains(record.lsn) && seen.add(record.lsn)) {
        live.add(record);
      }
    }
    live.sort(Comparator.comparingLong(BufferedIntervalRecord::lsn));
    return live;
  }

  private static boolean hasSeparator(String text, String extra) {
    return text.contains(" ") || text.contains("\n") || (!extra.isEmpty() && text.contains(extra));
  }
}
