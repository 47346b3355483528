package io.dendrite.iq.server;

/** A change the client's user may not make (see {@link ServerState#requireMayChange}); nothing was changed. */
final class NotPermittedException extends RuntimeException {
  NotPermittedException(String message) {
    super(message, null, false, false);
  }
}
