package io.dendrite.core;

/**
 * The data store could not be reached (connection refused or lost, no server selected in time, pool exhausted):
 * unless {@link #notSent()}, the operation may or may not have been applied, and callers retry it later, which is
 * safe for idempotent changes and for session-guarded SQL batches. TARDIS treats it as "the data store is down".
 */
public class DataStoreUnavailableException extends DataStoreException {
  private static final long serialVersionUID = 1L;

  private final boolean notSent;

  /** The store could not be reached, and the operation may have been applied; {@code cause} is the driver's. */
  public DataStoreUnavailableException(String message, Throwable cause) {
    this(message, cause, false);
  }

  /**
   * The store could not be reached; {@code notSent} when the operation surely never left this process (no
   * connection could be had, no server was selected), so it was not applied.
   */
  public DataStoreUnavailableException(String message, Throwable cause, boolean notSent) {
    super(message, cause);
    this.notSent = notSent;
  }

  /**
   * Whether the operation surely never reached the data store, so it was not applied and applying it later applies
   * it once, whatever it is; false when it may have been applied (a connection was lost, or a reply did not come,
   * after it was sent), so only an idempotent change is safe to apply again.
   */
  public boolean notSent() {
    return notSent;
  }
}
