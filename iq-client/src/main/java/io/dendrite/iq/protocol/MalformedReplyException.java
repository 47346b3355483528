package io.dendrite.iq.protocol;

/**
 * A reply that does not follow the protocol. The connection it came from can no longer be trusted
 * to pair replies with requests and must be closed.
 */
public final class MalformedReplyException extends RuntimeException {
  /**
   * @param message what was wrong, quoting the offending line
   */
  public MalformedReplyException(String message) {
    super(message);
  }
}
