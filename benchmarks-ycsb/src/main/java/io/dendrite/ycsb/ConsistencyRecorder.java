package io.dendrite.ycsb;

import io.dendrite.consistency.History;
import io.dendrite.consistency.StaleReadChecker;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Logs what a run's reads returned and what its writes left, per (record, field), and counts the stale reads with
 * {@link StaleReadChecker}. Row {@code number * fieldCount + fieldIndex} is one field of one record; its value is
 * a 64-bit hash of the field's text, absent when the record (or field) does not exist.
 *
 * <p><b>The first-observed rule.</b> The values a record was loaded with are unknown to the run, so a read of a
 * (record, field) is checked only if it started after the first write of that (record, field) in this run ended:
 * from then on the loaded value is certainly overwritten, every value the field can hold is a logged write's, and
 * the checker's real-time rule is exact. Earlier reads are not checked. This never flags a correct cache and does
 * flag the look-aside race (a reader caching the value a completed write replaced).
 *
 * <p><b>Bounded memory.</b> Only every {@code stride}-th record is tracked, and after {@code maxEvents} events a
 * cutoff instant is fixed: later, writes are logged only if they started before it and reads only if they ended
 * before it, which keeps every logged read's window complete. A write that failed may or may not have happened, so
 * it is logged as never ending: it neither proves the old value overwritten nor is ruled out.
 */
final class ConsistencyRecorder {
  private record Event(long row, Long value, long start, long end, boolean write) {}

  private final int fieldCount;
  private final long stride;
  private final long maxEvents;
  private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
  private final AtomicLong eventCount = new AtomicLong();
  private volatile long cutoff = Long.MAX_VALUE;

  ConsistencyRecorder(int fieldCount, long stride, long maxEvents) {
    if (fieldCount < 1 || stride < 1 || maxEvents < 1) {
      throw new IllegalArgumentException(
          "fieldCount, stride and maxEvents must be positive, got "
              + fieldCount
              + ", "
              + stride
              + ", "
              + maxEvents);
    }
    this.fieldCount = fieldCount;
    this.stride = stride;
    this.maxEvents = maxEvents;
  }

  /** Whether record {@code number} is one of those tracked. */
  boolean tracks(long number) {
    return Math.floorMod(number, stride) == 0;
  }

  /** The stride: every how many records one is tracked. */
  long stride() {
    return stride;
  }

  /** Whether the event budget ran out and later events were dropped at the cutoff. */
  boolean truncated() {
    return cutoff != Long.MAX_VALUE;
  }

  /**
   * Logs a read of record {@code number} that returned {@code fields} ({@code null}: not found). {@code wanted} are
   * the fields asked for, null for all.
   */
  void read(
      RecordTable table,
      long number,
      Set<String> wanted,
      Map<String, String> fields,
      long start,
      long end) {
    if (!tracks(number) || end >= cutoff) {
      return;
    }
    if (wanted == null) {
      for (int index = 0; index < fieldCount; index++) {
        String value = fields == null ? null : fields.get(table.fieldName(index));
        add(new Event(row(number, index), hash(value), start, end, false));
      }
      return;
    }
    for (String field : wanted) {
      int index = table.fieldIndex(field);
      if (index >= 0) {
        add(
            new Event(
                row(number, index),
                hash(fields == null ? null : fields.get(field)),
                start,
                end,
                false));
      }
    }
  }

  /** Logs a scan of records [first, last] that returned {@code records}; records missing from it were absent. */
  void scan(
      RecordTable table,
      long first,
      long last,
      Set<String> wanted,
      List<YcsbRecord> records,
      long start,
      long end) {
    Map<Long, YcsbRecord> byNumber = new HashMap<>();
    records.forEach(record -> byNumber.put(record.number(), record));
    for (long number = first; number <= last && number >= first; number++) {
      if (tracks(number)) {
        YcsbRecord record = byNumber.get(number);
        read(table, number, wanted, record == null ? null : record.fields(), start, end);
      }
    }
  }

  /**
   * Logs a write that left the fields of record {@code number} as {@code values}: the given fields set, or, when
   * {@code whole} (an insert or a delete), every other field absent.
   */
  void write(
      RecordTable table,
      long number,
      Map<String, String> values,
      boolean whole,
      boolean succeeded,
      long start,
      long end) {
    if (!tracks(number) || start >= cutoff) {
      return;
    }
    long ended = succeeded ? end : Long.MAX_VALUE;
    for (int index = 0; index < fieldCount; index++) {
      String field = table.fieldName(index);
      if (whole || values.containsKey(field)) {
        add(new Event(row(number, index), hash(values.get(field)), start, ended, true));
      }
    }
  }

  /** Checks every logged read by the first-observed rule. */
  StaleReadChecker.Report check() {
    Map<Long, Long> firstWriteEnd = new HashMap<>();
    for (Event event : events) {
      if (event.write()) {
        firstWriteEnd.merge(event.row(), event.end(), Math::min);
      }
    }
    History history = new History(Map.of());
    for (Event event : events) {
      if (event.write()) {
        history.recordWrite(event.row(), event.value(), event.start(), event.end());
      } else if (event.start() > firstWriteEnd.getOrDefault(event.row(), Long.MAX_VALUE)) {
        Map<Long, Long> returned =
            event.value() == null ? Map.of() : Map.of(event.row(), event.value());
        history.recordRead(event.row(), event.row(), returned, event.start(), event.end());
      }
    }
    return StaleReadChecker.check(history);
  }

  private long row(long number, int fieldIndex) {
    return number * fieldCount + fieldIndex;
  }

  private void add(Event event) {
    if (eventCount.incrementAndGet() > maxEvents && cutoff == Long.MAX_VALUE) {
      synchronized (this) {
        if (cutoff == Long.MAX_VALUE) {
          cutoff = System.nanoTime();
        }
      }
    }
    events.add(event);
  }

  /** FNV-1a over the UTF-8 bytes: values are compared, never read back, so a 64-bit digest stands in for them. */
  static Long hash(String value) {
    if (value == null) {
      return null;
    }
    long hash = 0xcbf29ce484222325L;
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
    }
    return hash;
  }
}
