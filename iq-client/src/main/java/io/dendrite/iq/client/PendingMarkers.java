package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;

/**
 * The pending markers of the servers of an {@link IqClient} (Dendrite's server; see {@code docs/protocol.md}, "Pending
 * markers"), got from {@link IqClient#pendingMarkers()}. A marked key's leases say {@link LeaseHandle#pending()
 * pending}: a buffered write of it may exist that the data store lacks. For TARDIS's Contextual recovery, which marks
 * a key before it buffers a write of it and tells a restarted server when its markers are complete again; an ordinary
 * cache user needs none of this. Both commands need a login that may pin items where the server restricts pinning
 * ({@code --pin-users}). Thread-safe, as the client is.
 */
public final class PendingMarkers {
  private final IqClient client;

  PendingMarkers(IqClient client) {
    this.client = client;
  }

  /**
   * Sets the key's pending marker ({@code pmark}): from now on every lease on the key says {@link
   * LeaseHandle#pending() pending}, until a holder clears it ({@link LeaseHandle#fill}, {@link
   * Transaction#commit(boolean) commit(false)}). TARDIS marks a key this way before it buffers a write of it, and
   * takes the key's Q lease first ({@link Transaction#readForUpdate}), so that no reader told "not pending" before
   * the mark fills the key, nor another writer clears the mark meanwhile.
   *
   * @return {@link Outcome#OK}, or {@link Outcome#PINNED_MEMORY_FULL} when the marker does not fit the server's
   *     pinned memory (nothing is marked)
   * @throws IqException when the server refuses (not a pin user; a server without {@code pmark})
   */
  public Outcome mark(String key) {
    return Outcome.of(client.connectionFor(key).call(OutgoingRequest.pmark(key)));
  }

  /**
   * Tells {@code server} that its pending markers are complete ({@code pready}): a restart lost them, and until this
   * call its leases all say {@link LeaseHandle#pending() pending}. Send it once every key known to have a buffered
   * write is marked again ({@link #mark}); sending it earlier makes the server answer "not pending" for keys whose
   * markers are still missing.
   *
   * @throws IqException when the server refuses (not a pin user; a server without {@code pready})
   */
  public void ready(ServerAddress server) {
    Reply reply = client.connection(server).call(OutgoingRequest.pready());
    if (!(reply instanceof Reply.Status status && status.line().equals("OK"))) {
      String line = reply instanceof Reply.Status status ? status.line() : String.valueOf(reply);
      throw new IqException(server + " did not take pready: " + line);
    }
  }
}
