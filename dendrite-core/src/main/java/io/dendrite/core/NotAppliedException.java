package io.dendrite.core;

/**
 * An operation failed having changed nothing: a write was not applied, to the data store or to a write buffer, and
 * may be retried as it is. One of the two ways a {@link Dendrite#write} fails (the other is {@link
 * OutcomeUnknownException}); the cause, or the subclass, says why: leases stayed taken ({@link
 * DendriteBusyException}), the range's owner was fenced out or lost the range before writing, pinned memory refused
 * to buffer it. A {@link ChangeApplier} or {@link WriteCommand} that knows its data-store write changed nothing (it
 * rolled back, or refused the change) throws this to say so; any other failure of theirs is an unknown outcome.
 */
public class NotAppliedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** An operation that changed nothing, as {@code message} says, because of {@code cause} (may be null). */
  public NotAppliedException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * What a named write's failure {@code failure} says to its caller: a {@link NotAppliedException} or an {@link
   * OutcomeUnknownException} (each kept as it is), or the {@link IllegalArgumentException} of a bad argument, refused
   * before anything changed. Every deployment's {@link Dendrite#write} throws what this returns.
   */
  public static RuntimeException orOutcomeUnknown(RuntimeException failure) {
    if (failure instanceof NotAppliedException
        || failure instanceof OutcomeUnknownException
        || failure instanceof IllegalArgumentException) {
      return failure;
    }
    if (failure instanceof StoreFencedOutException || failure instanceof RangeNotOwnedException) {
      // Both are raised before the write's statement commits: its transaction rolled back, or it
      // never ran.
      return new NotAppliedException("not applied: " + failure.getMessage(), failure);
    }
    return new OutcomeUnknownException(
        "the write may or may not have been applied: " + failure, failure);
  }
}
