package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One party to the handovers of leaving servers ({@link ReplicaPlacement#joinHandovers}), for a write-back engine's
 * replica repair. A leaving server ({@code stats leaving 1}) waits before it stops until every connection that stored
 * pinned items on it said {@code pmoved}, "every pinned value I keep a replica of here is now copied to the servers
 * that replace this one", or closed. The parties of one client share its connections, so the client says it only
 * once all of them have copied. Thread-safe.
 */
public final class HandoverParty implements AutoCloseable {
  /** Every party of the client, this one included; also the lock of every party's {@link #moved} set. */
  private final Set<HandoverParty> parties;

  private final IqClient client;
  private final Set<ServerAddress> moved = ConcurrentHashMap.newKeySet();

  private HandoverParty(Set<HandoverParty> parties, IqClient client) {
    this.parties = parties;
    this.client = client;
  }

  /** A new party among {@code parties}, the parties of {@code client}. */
  static HandoverParty join(Set<HandoverParty> parties, IqClient client) {
    HandoverParty party = new HandoverParty(parties, client);
    parties.add(party);
    return party;
  }

  /**
   * This party has copied every pinned value it keeps a replica of on {@code server} to the servers that replace
   * it. Once every party of the client said so (since the server was last told), the server is told {@code
   * pmoved} on each of the client's connections to it, and every party has to say it again before it is told
   * again.
   *
   * @return whether the server was told now and took it on every open connection (false: another party has not
   *     copied yet, no connection is open, or the server is not leaving or does not know {@code pmoved})
   * @throws IqConnectionException when the server cannot be reached
   */
  public boolean moved(ServerAddress server) {
    synchronized (parties) {
      moved.add(server);
      for (HandoverParty party : parties) {
        if (!party.moved.contains(server)) {
          return false;
        }
      }
      parties.forEach(party -> party.moved.remove(server));
    }
    List<Reply> replies = client.connection(server).callOnEveryOpen(OutgoingRequest::pmoved);
    return !replies.isEmpty()
        && replies.stream()
            .allMatch(reply -> reply instanceof Reply.Status status && status.line().equals("OK"));
  }

  /** Takes back what this party said with {@link #moved}: it has copying to do again. */
  public void notMoved() {
    synchronized (parties) {
      moved.clear();
    }
  }

  @Override
  public void close() {
    synchronized (parties) {
      parties.remove(this);
    }
  }
}
