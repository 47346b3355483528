package io.dendrite.iq.client;

import java.net.SocketTimeoutException;
import java.util.concurrent.TimeoutException;

/**
 * The connection to a server failed or was lost before the reply arrived. Whether the server
 * executed the request is unknown; any lease held there must be assumed lost.
 *
 * <p>Two kinds differ for anyone who keeps data in the cache tier: a server that refused or dropped
 * the connection is down (its memory is gone with it, or it is a new process that starts empty),
 * while one that did not answer in time ({@link #timedOut()}) may be alive and stalled, still
 * holding its values and leases, and may yet execute what was sent to it.
 */
public final class IqConnectionException extends IqException {
  /**
   * @param message what failed
   * @param cause   the underlying failure, may be null
   */
  public IqConnectionException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * Whether the server did not answer (or accept the connection) within the configured time, as
   * opposed to refusing or dropping the connection: such a server may be alive, stalled by a pause
   * or overload, and its state must not be taken for lost.
   */
  public boolean timedOut() {
    for (Throwable cause = getCause(); cause != null; cause = cause.getCause()) {
      if (cause instanceof TimeoutException || cause instanceof SocketTimeoutException) {
        return true;
      }
    }
    return false;
  }
}
