package io.dendrite.core;

/**
 * A lease Dendrite needs stayed taken until its deadline: an interval lease (LeMInT) held by
 * conflicting gets or writes, or a cache entry's Q lease held by another process. Nothing was changed;
 * the operation may be retried.
 */
public final class DendriteBusyException extends NotAppliedException {
  /** A lease (or, across processes, a range's owner) stayed out of reach: {@code message} says which. */
  public DendriteBusyException(String message, Throwable cause) {
    super(message, cause);
  }
}
