package io.dendrite.consistency;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A thread-safe log of what a concurrent workload did: every write with the row it changed, the value
 * it left and when it started and ended, and every read with what it returned and when it ran. Times come
 * from {@link System#nanoTime()}, taken by the caller immediately before the operation starts and
 * after it returns, so the windows are conservative.
 *
 * <p>Rows are identified by a {@code long} key; a value is any object with a meaningful
 * {@code equals} ({@link Optional#empty()} stands for "row absent").
 */
public final class History {

  /** A write that left {@code value} in row {@code row}; it took effect somewhere in [start, end]. */
  public record Write(long row, Optional<Object> value, long start, long end) {}

  /**
   * A read of the rows in [{@code lowerRow}, {@code upperRow}] that returned {@code returned}
   * (rows missing from the map were returned as absent).
   */
  public record Read(
      long lowerRow, long upperRow, Map<Long, Object> returned, long start, long end) {}

  private final Map<Long, Object> initialRows;
  private final ConcurrentLinkedQueue<Write> writes = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Read> reads = new ConcurrentLinkedQueue<>();

  /** A history whose rows held {@code initialRows} (row → value) before the workload began. */
  public History(Map<Long, Object> initialRows) {
    this.initialRows = Map.copyOf(initialRows);
  }

  /** Records a write that set {@code row} to {@code value} ({@code null} = deleted). */
  public void recordWrite(long row, Object value, long start, long end) {
    writes.add(new Write(row, Optional.ofNullable(value), start, end));
  }

  /** Records a range read and what it returned. */
  public void recordRead(
      long lowerRow, long upperRow, Map<Long, ?> returned, long start, long end) {
    reads.add(new Read(lowerRow, upperRow, Map.copyOf(returned), start, end));
  }

  Map<Long, Object> initialRows() {
    return initialRows;
  }

  List<Write> writes() {
    return new ArrayList<>(writes);
  }

  List<Read> reads() {
    return new ArrayList<>(reads);
  }
}
