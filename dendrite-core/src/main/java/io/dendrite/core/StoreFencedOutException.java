package io.dendrite.core;

/**
 * The data store refused a range owner's statement because a later owner raised the range's fence there ({@link
 * StoreFence}): the statement changed nothing (its transaction was rolled back, or its conditional update matched
 * nothing), so the write may be sent again to the range's current owner.
 */
public final class StoreFencedOutException extends DataStoreUnavailableException {
  private static final long serialVersionUID = 1L;

  private final FenceToken refused;
  private final long fenceEpoch;

  /** {@code refused}'s statement met the fence at {@code fenceEpoch}, above its own epoch. */
  public StoreFencedOutException(FenceToken refused, long fenceEpoch) {
    super(
        refused.fence()
            + " stands at epoch "
            + fenceEpoch
            + " in the data store, above this owner's "
            + refused.epoch()
            + ": the statement was refused and changed nothing (a later owner has the range)",
        null,
        true);
    this.refused = refused;
    this.fenceEpoch = fenceEpoch;
  }

  /** The token of the refused statement. */
  public FenceToken refused() {
    return refused;
  }

  /** The fence's epoch the statement met. */
  public long fenceEpoch() {
    return fenceEpoch;
  }
}
