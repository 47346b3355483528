package io.dendrite.core;

/**
 * A data store operation failed: a {@link Dendrite}'s query or change function threw a checked exception (the
 * cause), or a store refused an operation for a reason retrying will not fix by itself (a constraint violation, a
 * type conflict, a missing table). Every failure of the data store that Dendrite or its write-back engines report
 * is one, so a caller catching this type catches them all; {@link DataStoreUnavailableException} is the kind worth
 * retrying.
 */
public class DataStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** A failure described by {@code message}, caused by {@code cause} (the driver's or the function's). */
  public DataStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
