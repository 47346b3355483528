package io.dendrite.core;

/** A query or change function failed with a checked exception; the cause is the original failure. */
public final class DataStoreException extends RuntimeException {
  DataStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
