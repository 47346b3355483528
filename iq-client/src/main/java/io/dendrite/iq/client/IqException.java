package io.dendrite.iq.client;

/**
 * A failure that is not a protocol outcome: the server could not be reached, did not answer in
 * time, answered {@code CLIENT_ERROR}/{@code SERVER_ERROR}, or the caller was interrupted.
 */
public class IqException extends RuntimeException {
  /**
   * @param message what failed
   */
  public IqException(String message) {
    super(message);
  }

  /**
   * @param message what failed
   * @param cause   the underlying failure
   */
  public IqException(String message, Throwable cause) {
    super(message, cause);
  }
}
