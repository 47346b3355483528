package io.dendrite.tardis;

import io.dendrite.core.DataStoreUnavailableException;

/**
 * A write the data store may or may not have applied (its connection was lost, or its reply did not come, after it
 * was sent), and that is not idempotent ({@code $inc}, {@code $push}, ...): buffering it could apply it twice, so it
 * is neither buffered nor acknowledged, and the document's cached copy is dropped. The caller, who knows whether
 * running it twice is harmless, decides whether to retry.
 */
public final class TardisOutcomeUnknownException extends DataStoreUnavailableException {
  private static final long serialVersionUID = 1L;

  TardisOutcomeUnknownException(String message, DataStoreUnavailableException cause) {
    super(message, cause, false);
  }
}
