package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.IqException;
import io.dendrite.writeback.change.EntityKey;
import java.util.Set;

/**
 * The cache refused to pin the idempotent form of non-idempotent buffered writes (it outgrew the servers' item size
 * limit, or pinned memory is full): they cannot be applied without risking a second apply after a crash, so they
 * stay buffered, as they were, and the drain goes on with the other documents.
 */
public final class IdempotentFormRefusedException extends IqException {
  private final Set<EntityKey> documents;

  IdempotentFormRefusedException(Set<EntityKey> documents, String why) {
    super(
        "could not pin the idempotent form of the buffered writes of "
            + documents
            + " ("
            + why
            + "): they stay buffered, unapplied, until it fits (a larger --max-item-size, or pinned memory"
            + " freed)",
        null);
    this.documents = Set.copyOf(documents);
  }

  /** The documents whose buffered writes stayed. */
  public Set<EntityKey> documents() {
    return documents;
  }
}
