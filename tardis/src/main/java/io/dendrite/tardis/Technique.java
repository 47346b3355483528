package io.dendrite.tardis;

/**
 * The four techniques of the thesis' Tables 4.2 and 4.3: how a process serves cache misses and writes in each
 * {@link Mode}. Hits are served from the cache in every mode: a buffered write refreshes the cached document as a
 * write to the data store does.
 *
 * <table>
 *   <caption>Misses and writes by mode</caption>
 *   <tr><th>mode</th><th>request</th><th>TAR</th><th>DIS</th><th>TARD</th><th>TARDIS</th></tr>
 *   <tr><td>failed</td><td>miss</td><td>unavailable</td><td>unavailable</td><td>unavailable</td><td>unavailable</td></tr>
 *   <tr><td>failed</td><td>write</td><td>buffer</td><td>buffer</td><td>buffer</td><td>buffer</td></tr>
 *   <tr><td>recovery</td><td>miss</td><td>unavailable</td><td>unavailable</td><td>apply, query</td><td>apply, query</td></tr>
 *   <tr><td>recovery</td><td>write</td><td>buffer</td><td>apply, write</td><td>buffer</td><td>apply, write</td></tr>
 *   <tr><td>normal</td><td>either, document clean</td><td colspan="4">the data store</td></tr>
 *   <tr><td>normal</td><td>either, buffered write</td><td colspan="4">as in recovery</td></tr>
 * </table>
 *
 * <p>"Apply" applies the document's buffered write to the data store first (lazy recovery). The last row is the
 * thesis' Recon (§4.4.2.1): a process in normal mode may meet a document another process, or an earlier run,
 * buffered, and must not read or write past it.
 */
public enum Technique {
  /** Buffers writes until active recovery workers apply them; misses wait for that. */
  TAR(false, false),
  /** Writes apply the document's buffered write first; misses wait for recovery. */
  DIS(false, true),
  /** Misses apply the document's buffered write first; writes keep buffering until recovery ends. */
  TARD(true, false),
  /** Misses and writes both apply the document's buffered write first. */
  TARDIS(true, true);

  /** What a process does with a cache miss. */
  public enum MissAction {
    /** Refuse: the data store may lack buffered writes. */
    UNAVAILABLE,
    /** Read the data store. */
    QUERY,
    /** Apply the document's buffered write, then read the data store. */
    APPLY_THEN_QUERY
  }

  /** What a process does with a write. */
  public enum WriteAction {
    /** Buffer it in the cache tier (teleport it). */
    BUFFER,
    /** Write the data store. */
    WRITE,
    /** Apply the document's buffered write, then write the data store. */
    APPLY_THEN_WRITE
  }

  private final boolean appliesOnMiss;
  private final boolean appliesOnWrite;

  Technique(boolean appliesOnMiss, boolean appliesOnWrite) {
    this.appliesOnMiss = appliesOnMiss;
    this.appliesOnWrite = appliesOnWrite;
  }

  /**
   * What a miss does in {@code mode}; {@code buffered} says whether the document has a buffered write, which
   * matters in normal mode only (in the other modes the action covers both).
   */
  public MissAction onMiss(Mode mode, boolean buffered) {
    return switch (mode) {
      case FAILED -> MissAction.UNAVAILABLE;
      case RECOVERY -> appliesOnMiss ? MissAction.APPLY_THEN_QUERY : MissAction.UNAVAILABLE;
      case NORMAL -> buffered ? onMiss(Mode.RECOVERY, true) : MissAction.QUERY;
    };
  }

  /** What a write does in {@code mode}; {@code buffered} as for {@link #onMiss}. */
  public WriteAction onWrite(Mode mode, boolean buffered) {
    return switch (mode) {
      case FAILED -> WriteAction.BUFFER;
      case RECOVERY -> appliesOnWrite ? WriteAction.APPLY_THEN_WRITE : WriteAction.BUFFER;
      case NORMAL -> buffered ? onWrite(Mode.RECOVERY, true) : WriteAction.WRITE;
    };
  }

  /** Whether the action for {@code mode} depends on the document having a buffered write (one lookup). */
  boolean needsToKnowBuffered(Mode mode) {
    return mode == Mode.NORMAL;
  }
}
