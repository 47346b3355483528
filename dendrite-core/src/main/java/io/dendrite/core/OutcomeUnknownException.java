package io.dendrite.core;

/**
 * A write failed and may or may not have been applied, so it is not retried for the caller, who knows whether
 * running it twice is harmless. One of the two ways a {@link Dendrite#write} fails (the other is {@link
 * NotAppliedException}); the cause says what happened: the data store failed while the write was in flight, the
 * cache tier failed after the data store took it, a forwarded write got no answer from its range's owner, the owner
 * lost the range while buffering it, or pinned memory refused part of a write to several documents.
 */
public class OutcomeUnknownException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** A write whose outcome is unknown, as {@code message} says, because of {@code cause} (may be null). */
  public OutcomeUnknownException(String message, Throwable cause) {
    super(message, cause);
  }
}
