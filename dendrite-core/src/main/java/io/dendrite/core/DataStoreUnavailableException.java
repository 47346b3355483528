package io.dendrite.core;

/**
 * The data store could not be reached (connection refused or lost, no server selected in time, pool exhausted):
 * the operation may or may not have been applied, and callers retry it later, which is safe for idempotent
 * changes and for session-guarded SQL batches. TARDIS treats it as "the data store is down".
 */
public class DataStoreUnavailableException extends DataStoreException {
  private static final long serialVersionUID = 1L;

  /** The store could not be reached; {@code cause} is the driver's exception. */
  public DataStoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
