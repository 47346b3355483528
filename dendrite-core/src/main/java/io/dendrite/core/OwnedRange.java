package io.dendrite.core;

/**
 * A range this process owns under a lease from a multi-process coordinator (ZooKeeper's, in {@code
 * dendrite-coordination}): the range's Dendrite and whatever it is built on may act as the range's only writer while
 * the lease is {@link #held()}. Past that, the cache servers refuse what the process still sends for the range: the
 * new owner raised the range's {@link #fence()} above this ownership's {@link #epoch()} before it started, and every
 * cache request made for the range goes out guarded by this epoch.
 *
 * <p>What follows from it: a write-back engine owned by a range may lock the range's documents inside this process
 * instead of by leases in the cache tier (see the write-back module's {@code DocumentWriteBack.Builder#ownedRange}).
 */
public interface OwnedRange {

  /** The collection of the range's Dendrite. */
  String collection();

  /** The domain name of the range's Dendrite ({@code <domain>.<index>}): unique per range in the cache tier. */
  String domain();

  /**
   * The range attribute, as the data store names it (the domain the whole Dendrite was built with; {@link #domain()}
   * adds the range's index to it). The default, {@link #domain()}, is for a range that is the Dendrite's whole domain.
   */
  default String attribute() {
    return domain();
  }

  /** The name of the range's fence on the cache servers. */
  String fence();

  /** This ownership's epoch: higher for every later owner of the range. */
  long epoch();

  /**
   * Whether this process still owns the range at this epoch, as far as it can tell now. A process that was paused
   * may find it lost here only after another owner started: the fence is what stops what it sends meanwhile.
   */
  boolean held();
}
