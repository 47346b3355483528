package io.dendrite.iq.client;

import java.util.List;

/**
 * A {@link ReplicatedTransaction}'s commit was applied on some replicas while its leases on the others had lapsed
 * first: the replicas differ until the next commit of those keys. What the caller staged is on some of them, what
 * was there before on the rest; a caller for whom either is fine to find again (nothing was built on the commit yet)
 * can start over under fresh leases.
 */
public final class PartlyCommittedException extends IqException {
  private final List<ServerAddress> lapsed;

  PartlyCommittedException(String message, List<ServerAddress> lapsed) {
    super(message);
    this.lapsed = List.copyOf(lapsed);
  }

  /** The replicas whose leases had lapsed, so that the commit did not apply there. */
  public List<ServerAddress> lapsed() {
    return lapsed;
  }
}
