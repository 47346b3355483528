package io.dendrite.iq.client;

/**
 * What one thread sent through a client: requests, and round trips awaited. Requests sent together, before the
 * thread waits on any reply, share one round trip; a request sent after the thread waited on a reply (blocked for it
 * or took it already read) starts the next one. So a chain of dependent requests counts one round trip per link,
 * however many requests each link sends at once. Only the sending thread writes these fields: a thread waiting on
 * another thread's request (a callback joining it) counts for neither.
 */
final class ThreadTrips {
  long requests;
  long roundTrips;

  /** Writes to a connection: one per request, or one per connection for the requests of a {@link Flight}. */
  long writes;

  /** Whether the thread waited for a reply since its last send; true at first, so the first send counts. */
  boolean waitedSinceSend = true;

  void sent() {
    requests++;
    if (waitedSinceSend) {
      roundTrips++;
      waitedSinceSend = false;
    }
  }

  void wrote() {
    writes++;
  }

  void waited() {
    waitedSinceSend = true;
  }
}
