package io.dendrite.iq.client;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An I (inhibit) lease on a missing key: only its holder may fill the key, so a value read from the
 * data store before a concurrent write cannot overwrite that write's invalidation. Knows its
 * server and token. Use it once: {@link #fill} the value, or {@link #close} to give the lease up so
 * other readers stop backing off.
 *
 * <pre>{@code
 * if (client.read(key) instanceof ReadResult.Leased leased) {
 *     try (LeaseHandle lease = leased.lease()) {
 *         lease.fill(loadFromDatabase(key));
 *     }
 * }
 * }</pre>
 */
public final class LeaseHandle implements AutoCloseable {

  private final ServerConnection server;
  private final String key;
  private final long token;
  private final long epoch;
  private final boolean pending;
  private final AtomicBoolean used = new AtomicBoolean();

  LeaseHandle(ServerConnection server, String key, long token, long epoch, boolean pending) {
    this.server = server;
    this.key = key;
    this.token = token;
    this.epoch = epoch;
    this.pending = pending;
  }

  /** The key this lease is on. */
  public String key() {
    return key;
  }

  /** The server that granted it. */
  public ServerAddress server() {
    return server.address();
  }

  /** The lease token the server granted. */
  public long token() {
    return token;
  }

  /**
   * Whether the server said {@code <p>} = 1 when it granted this lease: a pending marker is set on the key ({@link
   * PendingMarkers#mark}), so a buffered write of it may exist that the data store lacks; or the server has not been
   * told {@link PendingMarkers#ready pready} since it started, so it cannot know. Then apply that write before reading
   * the data store for the fill; the fill clears the marker. IQ-Twemcached reports its own {@code pd:} markers here.
   */
  public boolean pending() {
    return pending;
  }

  /** Fills the key with {@code value} and releases the lease; see {@link #fill(byte[], WriteOptions)}. */
  public Outcome fill(byte[] value) {
    return fill(value, WriteOptions.DEFAULT);
  }

  /**
   * Fills the key and releases the lease ({@code iqset}).
   *
   * @param value   the value read from the data store; must not be empty
   * @param options flags and TTL; {@code iqset} has no pinning field, so {@code pinned} must be false
   * @return {@link Outcome#OK}; {@link Outcome#NOT_STORED} if the lease was voided by a writer, expired
   *         or memory is full; {@link Outcome#STATE_LOST} if the server restarted since the grant
   * @throws IllegalStateException if the lease was already filled or closed
   */
  public Outcome fill(byte[] value, WriteOptions options) {
    if (value.length == 0 || options.pinned()) {
      throw new IllegalArgumentException("an I-lease fill needs a non-empty, unpinned value");
    }
    if (!used.compareAndSet(false, true)) {
      throw new IllegalStateException("lease on " + key + " already used");
    }
    if (server.epoch() != epoch) {
      return Outcome.STATE_LOST;
    }
    return Outcome.of(server.call(OutgoingRequest.iqset(key, value, options, token)));
  }

  /** Gives the lease up ({@code unlease}) unless it was filled; does nothing if the server's state is already gone. */
  @Override
  public void close() {
    if (used.compareAndSet(false, true) && server.epoch() == epoch) {
      server.send(OutgoingRequest.unlease(key, token));
    }
  }

  @Override
  public String toString() {
    return "LeaseHandle["
        + key
        + "@"
        + server.address()
        + ", token="
        + token
        + (pending ? ", pending" : "")
        + "]";
  }
}
