package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.IqException;

/**
 * A cache server that evicts nothing (stock memcached run with {@code -M}) had no memory for a value that a step
 * needed before it could return an {@link io.dendrite.iq.client.Outcome}, such as a lock key ({@link
 * RedleaseLocks}): nothing was changed.
 */
public final class ServerMemoryFullException extends IqException {
  private static final long serialVersionUID = 1L;

  public ServerMemoryFullException(String message) {
    super(message);
  }
}
