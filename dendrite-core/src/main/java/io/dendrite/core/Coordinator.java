package io.dendrite.core;

import io.dendrite.iq.client.IqClient;

/**
 * Decides which process owns a range (a collection's domain): only the owner keeps its PrInT, LeMInT
 * and log, and processes its cache misses and writes. The single-process {@link LocalCoordinator} owns
 * everything a second owner does not hold in the cache tier; a multi-process coordinator (ZooKeeper) grants one
 * owner per range and lets the others forward to it, behind this same interface.
 */
public interface Coordinator {

  /**
   * Claims the range of {@code domain} in {@code collection} for this process.
   *
   * @throws IllegalStateException if the range cannot be owned here
   */
  RangeClaim claim(String collection, String domain);

  /**
   * Claims the range for a Dendrite whose cached results live in {@code cache}'s servers: a coordinator that keeps
   * its claims in the cache tier itself (as {@link LocalCoordinator} does) refuses an owner of the same range in
   * another process too. By default, {@link #claim(String, String)}.
   *
   * @throws IllegalStateException if the range cannot be owned here
   */
  default RangeClaim claim(String collection, String domain, IqClient cache) {
    return claim(collection, domain);
  }

  /** Ownership of one range; closing it gives the range up. */
  interface RangeClaim extends AutoCloseable {
    /**
     * Refuses, before a miss fills the cache or a write changes anything, when this process can no longer show that
     * it owns the range (its claim lapsed while it was paused, or another owner took it). By default, never.
     *
     * @throws IllegalStateException naming the range, when the claim is lost
     */
    default void check() {}

    /**
     * Whether no other process can own the range while this claim holds: a claim in the cache tier ({@link
     * LocalCoordinator}), or ownership granted by ZooKeeper behind a fence. Only then may a write-back write drop a
     * cached result whose lease another writer holds instead of waiting for it (its one-round-trip update): the other
     * writer can only be one of this Dendrite's own, serialized by the interval leases. By default, false.
     */
    default boolean excludesOtherOwners() {
      return false;
    }

    /**
     * Whether this process may keep the range's results in its own memory (the near cache): no other process can own
     * the range while the claim holds, and {@link #check} refuses as soon as this process can no longer show that it
     * holds (a claim with a lifetime it renews), so a result kept here cannot miss another owner's write. A Dendrite
     * keeps results in memory only when {@link #excludesOtherOwners} says so too. By default, false.
     */
    default boolean mayKeepResultsInMemory() {
      return false;
    }

    /** Gives the range up. */
    @Override
    void close();
  }
}
