package io.dendrite.iq.client;

/**
 * What {@link Transaction#readForUpdate} got: the key's Q-refresh lease, or {@link ReadResult.Busy}
 * if another writer kept its Q lease until the backoff deadline.
 */
public sealed interface RefreshResult permits RefreshResult.Granted, ReadResult.Busy {

  /**
   * The lease was granted.
   *
   * @param lease the lease, carrying the current value if there is one
   */
  record Granted(RefreshLease lease) implements RefreshResult {}
}
