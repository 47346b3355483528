package io.dendrite.iq.protocol;

/**
 * Thrown when the words of a request do not fit the command's syntax. The message is the reason
 * the server sends back as {@code CLIENT_ERROR <message>}.
 */
public final class MalformedRequestException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public MalformedRequestException(String reason) {
    super(reason, null, false, false);
  }
}
