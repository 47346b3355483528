package io.dendrite.core;

/**
 * This process no longer owns the range an operation is for (its ownership moved to another process, or its claim
 * lapsed while it was paused), and refused the operation before it changed anything: it may be sent again to the
 * range's current owner.
 */
public final class RangeNotOwnedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The refusal, {@code message} naming the range and why it is not owned here. */
  public RangeNotOwnedException(String message) {
    super(message);
  }
}
