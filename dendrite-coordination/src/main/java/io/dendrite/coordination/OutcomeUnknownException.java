package io.dendrite.coordination;

/**
 * A write may or may not have been applied, so it is not retried for the caller, who knows whether running it twice
 * is harmless: it was forwarded to its range's owner and got no answer (the connection dropped, or the reply did not
 * come in time), or, under write-back, its owner lost the range while buffering it (a new owner's fence refused part
 * of it).
 */
public final class OutcomeUnknownException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  OutcomeUnknownException(String message, Throwable cause) {
    super(message, cause);
  }
}
