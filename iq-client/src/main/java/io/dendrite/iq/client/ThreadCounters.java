package io.dendrite.iq.client;

/**
 * What the calling thread has sent through an {@link IqClient} so far, got from {@link IqClient#threadCounters()}:
 * for benchmarks and tests that measure what one operation costs in requests, round trips and writes, as the
 * difference of a count across it. Every count is the calling thread's own, so that a caller sharing the client
 * across threads can attribute round trips to its own operations (a benchmark binding counts cache round trips per
 * operation type this way); an ordinary cache user needs none of this. The counting itself is {@link ThreadTrips}'s.
 */
public final class ThreadCounters {

  /** The counts of each thread, shared by the client's connections, which count every request as it is sent. */
  final ThreadLocal<ThreadTrips> ofThread = ThreadLocal.withInitial(ThreadTrips::new);

  ThreadCounters() {}

  /**
   * How many requests the calling thread has sent to the servers through this client so far, each one round trip
   * (a multi-get counts once per server it asks; a retried read once per attempt). The difference across a call
   * is that call's round trips, even while other threads use the same client.
   */
  public long requests() {
    return ofThread.get().requests;
  }

  /**
   * How many round trips the calling thread has awaited through this client so far: requests it sent together,
   * before waiting for any reply, count as one; a request sent after it had to wait for a reply starts the next.
   * The difference across a call is the length of that call's chain of dependent requests, which is what its
   * latency is made of, however many requests each step sends at once.
   */
  public long roundTrips() {
    return ofThread.get().roundTrips;
  }

  /**
   * How many writes to a connection the calling thread has made through this client so far: one per request it
   * sent, except that the requests a {@link Flight} held go out in one write per connection.
   */
  public long writes() {
    return ofThread.get().writes;
  }
}
