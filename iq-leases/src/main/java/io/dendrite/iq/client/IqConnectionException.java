package io.dendrite.iq.client;

/**
 * The connection to a server failed or was lost before the reply arrived. Whether the server
 * executed the request is unknown; any lease held there must be assumed lost.
 */
public final class IqConnectionException extends IqException {
    /**
     * @param message what failed
     * @param cause   the underlying failure, may be null
     */
    public IqConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
