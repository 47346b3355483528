package io.dendrite.iq.client;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A Q-refresh lease taken by {@link Transaction#readForUpdate}: the key is quarantined, readers keep
 * seeing the current value, and the new value staged with {@link #swap} becomes visible when the
 * transaction commits (or is dropped if it releases). Knows its server and token.
 */
public final class RefreshLease {

  private final ServerConnection server;
  private final String key;
  private final long token;
  private final long epoch;
  private final boolean pending;
  private final CacheValue current;

  RefreshLease(
      ServerConnection server,
      String key,
      long token,
      long epoch,
      boolean pending,
      CacheValue current) {
    this.server = server;
    this.key = key;
    this.token = token;
    this.epoch = epoch;
    this.pending = pending;
    this.current = current;
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
   * told {@link PendingMarkers#ready pready} since it started, so it cannot know. {@link Transaction#commit(boolean)
   * commit(false)} clears the marker while this lease is held; {@code commit(true)} keeps it.
   */
  public boolean pending() {
    return pending;
  }

  /** The value cached when the lease was granted, if any. */
  public Optional<CacheValue> current() {
    return Optional.ofNullable(current);
  }

  /** Stages {@code value} with default options; see {@link #swap(byte[], WriteOptions)}. */
  public Outcome swap(byte[] value) {
    return swap(value, WriteOptions.DEFAULT);
  }

  /**
   * Stages the new value ({@code swap}); the lease is kept until commit or release. May be called
   * again to replace the staged value.
   *
   * @param value   the new value; empty stages a delete (the commit removes the key)
   * @param options flags, TTL and pinning of the value once committed
   * @return {@link Outcome#OK}; {@link Outcome#INVALID} if the lease was lost to a writer or expired;
   *         {@link Outcome#PINNED_MEMORY_FULL}; {@link Outcome#STATE_LOST} if the server restarted
   */
  public Outcome swap(byte[] value, WriteOptions options) {
    return ServerConnection.await(swapAsync(value, options));
  }

  /**
   * {@link #swap(byte[], WriteOptions)} without waiting for the reply, so that many swaps are in flight together;
   * sent on the transaction's ordered connection, so a commit sent right after it applies it.
   */
  public CompletableFuture<Outcome> swapAsync(byte[] value, WriteOptions options) {
    if (server.epoch() != epoch) {
      return CompletableFuture.completedFuture(Outcome.STATE_LOST);
    }
    return server
        .sendInOrder(OutgoingRequest.swap(key, value, options, token))
        .thenApply(Outcome::of);
  }

  @Override
  public String toString() {
    return "RefreshLease["
        + key
        + "@"
        + server.address()
        + ", token="
        + token
        + (pending ? ", pending" : "")
        + "]";
  }
}
