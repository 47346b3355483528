package io.dendrite.iq.client;

/**
 * What one thread sent through a client: requests, and round trips awaited. Requests sent together, before the
 * thread waits for any reply, share one round trip; a request sent after the thread had to wait for a reply starts
 * the next one. So a chain of dependent requests counts one round trip per link, however many requests each link
 * sends at once. Only the sending thread writes these fields, except that a thread waiting on another thread's
 * request marks that thread as having waited (rare, and then the count is approximate).
 */
final class ThreadTrips {
    long requests;
    long roundTrips;
    /** Whether the thread waited for a reply since its last send; true at first, so the first send counts. */
    boolean waitedSinceSend = true;

    void sent() {
        requests++;
        if (waitedSinceSend) {
            roundTrips++;
            waitedSinceSend = false;
        }
    }

    void waited() {
        waitedSinceSend = true;
    }
}
