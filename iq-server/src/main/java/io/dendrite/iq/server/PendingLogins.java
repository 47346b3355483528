package io.dendrite.iq.server;

import io.netty.channel.Channel;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The connections that have not logged in yet, oldest first ({@code --max-pending-logins}). A stranger can open
 * connections and never log in; were they kept until the login deadline, enough of them would take every slot and
 * lock out the clients that do log in. So when there are more than the limit, or every connection slot is taken,
 * the one that has waited longest is closed to make room: a client that logs in at once is closed only if strangers
 * open more than the limit of connections in the time its login takes.
 */
final class PendingLogins {

  private final int limit;
  private final ServerStats stats;
  private final Set<Channel> waiting = new LinkedHashSet<>();

  PendingLogins(int limit, ServerStats stats) {
    this.limit = limit;
    this.stats = stats;
  }

  /** {@code channel} opened and must log in; closes the longest waiting ones past the limit. */
  void opened(Channel channel) {
    synchronized (this) {
      waiting.add(channel);
    }
    while (size() > limit && evictOldest(channel)) {
      // closed one
    }
  }

  /** {@code channel} logged in or closed. */
  synchronized void done(Channel channel) {
    waiting.remove(channel);
  }

  /**
   * Closes the connection that has waited longest to log in, unless it is {@code except}.
   *
   * @return whether one was closed
   */
  boolean evictOldest(Channel except) {
    Channel oldest;
    synchronized (this) {
      Iterator<Channel> it = waiting.iterator();
      if (!it.hasNext()) {
        return false;
      }
      oldest = it.next();
      if (oldest == except) {
        return false;
      }
      it.remove();
    }
    stats.pendingLoginsEvicted.increment();
    oldest.close();
    return true;
  }

  synchronized int size() {
    return waiting.size();
  }
}
