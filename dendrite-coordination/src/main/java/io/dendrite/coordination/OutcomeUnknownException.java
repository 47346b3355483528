package io.dendrite.coordination;

/**
 * A write forwarded to its range's owner got no answer: the connection dropped or the reply did not come in time
 * after the owner had the request. It may or may not have run, so it is not retried for the caller, who knows
 * whether running it twice is harmless.
 */
public final class OutcomeUnknownException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  OutcomeUnknownException(String message, Throwable cause) {
    super(message, cause);
  }
}
