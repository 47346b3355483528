package io.dendrite.iq.server;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Which connections a leaving server waits for before it stops ({@link IqServer#leave}): every open connection on
 * which a pinned item was stored (a buffered write, its listing, its log; {@link #wrotePinned}) is taken for a
 * client that keeps replicas of pinned values here, and it is done once it has said {@code pmoved} ("every pinned
 * value I keep a replica of here is now copied to the servers that replace this one") since its last pinned store,
 * or once it has closed. A pinned store after its {@code pmoved} makes it wait again: what it just wrote here was
 * not in the copies it confirmed.
 *
 * <p>A client is a connection here: the server does not know which connections belong to one client process, so a
 * client says {@code pmoved} on every connection it has to the server. One that lost its connection since it stored
 * its pinned items and did not store any on its new one counts as done, as any closed connection does.
 */
final class Handover {

  /** What {@link #awaitConfirmations} found when it returned. */
  record Outcome(int confirmed, int closed, int unconfirmed) {}

  /** Open connections that stored a pinned item; closed ones are removed. */
  private final Set<Client> writers = ConcurrentHashMap.newKeySet();

  /** Connections that stored a pinned item and closed since the server started to leave. */
  private int closedWhileLeaving;

  /** Connections that said {@code pmoved} and then closed, while the server was leaving: they count as confirmed. */
  private int confirmedThenClosed;

  private boolean leaving;

  /** A pinned item was stored through {@code client}: it keeps replicas here until it says {@code pmoved}. */
  void wrotePinned(Client client) {
    client.moved = false;
    if (!client.wrotePinned) {
      client.wrotePinned = true;
      writers.add(client);
    }
  }

  /**
   * {@code pmoved} from {@code client}: recorded only while the server is leaving, since before that no client can
   * have copied anything for the leave.
   *
   * @return whether it was recorded
   */
  synchronized boolean moved(Client client) {
    if (!leaving) {
      return false;
    }
    client.moved = true;
    notifyAll();
    return true;
  }

  /** {@code client}'s connection closed: nothing is waited for from it any more. */
  synchronized void closed(Client client) {
    if (writers.remove(client)) {
      if (leaving && client.moved) {
        confirmedThenClosed++;
      } else if (leaving) {
        closedWhileLeaving++;
      }
      notifyAll();
    }
  }

  /** Starts recording {@code pmoved}s. */
  synchronized void leave() {
    leaving = true;
  }

  /**
   * Waits until every connection that stored a pinned item has said {@code pmoved} or closed, or until {@code
   * deadline} of {@code nanoClock} has passed.
   */
  synchronized Outcome awaitConfirmations(long deadline, LongSupplier nanoClock)
      throws InterruptedException {
    while (true) {
      int confirmed = confirmed();
      int unconfirmed = unconfirmed();
      long left = deadline - nanoClock.getAsLong();
      if (unconfirmed == 0 || left <= 0) {
        return new Outcome(confirmed + confirmedThenClosed, closedWhileLeaving, unconfirmed);
      }
      long millis = Math.max(1, Math.min(Duration.ofNanos(left).toMillis(), 100));
      wait(millis); // woken by pmoved and closes; a pinned store is seen at the next timeout
    }
  }

  /** Open connections that stored a pinned item and have not said {@code pmoved} since. */
  int unconfirmed() {
    int unconfirmed = 0;
    for (Client writer : writers) {
      if (!writer.moved) {
        unconfirmed++;
      }
    }
    return unconfirmed;
  }

  /** Open connections that stored a pinned item and said {@code pmoved} since. */
  int confirmed() {
    int confirmed = 0;
    for (Client writer : writers) {
      if (writer.moved) {
        confirmed++;
      }
    }
    return confirmed;
  }
}
