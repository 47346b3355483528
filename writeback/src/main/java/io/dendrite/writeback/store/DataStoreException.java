package io.dendrite.writeback.store;

/**
 * A data store refused or failed an operation for a reason retrying will not fix by itself (a constraint
 * violation, a type conflict, a missing table). Nothing of the failed batch is left applied where the store
 * offers atomicity (a SQL transaction, one MongoDB document update).
 */
public class DataStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** A failure described by {@code message}, caused by the driver's {@code cause}. */
  public DataStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
