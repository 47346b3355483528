package io.dendrite.core;

/**
 * Decides which process owns a range (a collection's domain): only the owner keeps its PrInT, LeMInT
 * and log, and processes its cache misses and writes. The single-process {@link LocalCoordinator} owns
 * everything; a multi-process coordinator (ZooKeeper) grants one owner per range and lets the others
 * forward to it, behind this same interface.
 */
public interface Coordinator {

  /**
   * Claims the range of {@code domain} in {@code collection} for this process.
   *
   * @throws IllegalStateException if the range cannot be owned here
   */
  RangeClaim claim(String collection, String domain);

  /** Ownership of one range; closing it gives the range up. */
  interface RangeClaim extends AutoCloseable {
    /** Gives the range up. */
    @Override
    void close();
  }
}
