package io.dendrite.tardis;

/**
 * How an application process treats the data store (the thesis' Figure 4.3). Each process has its own; processes
 * need no agreement on it, because what a document needs is read from the cache per document (its buffered write).
 */
public enum Mode {
  /** The data store takes the writes; documents with a buffered write are served as in {@link #RECOVERY}. */
  NORMAL,
  /** A write failed: writes are buffered in the cache tier and misses are unavailable. */
  FAILED,
  /** The data store answers again, and buffered writes remain: each technique serves them its own way. */
  RECOVERY
}
