package io.dendrite.tardis;

import io.dendrite.core.DataStoreUnavailableException;

/**
 * A cache miss that the technique cannot serve consistently now: the data store is down, or may lack writes buffered
 * in the cache tier that this technique applies only through recovery. Nothing was read; try again later. A {@link
 * DataStoreUnavailableException}, so code that handles the data store being down handles this too.
 */
public final class TardisUnavailableException extends DataStoreUnavailableException {
  private static final long serialVersionUID = 1L;

  TardisUnavailableException(String message, Throwable cause) {
    super(message, cause, true);
  }
}
