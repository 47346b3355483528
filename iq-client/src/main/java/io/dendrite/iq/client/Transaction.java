package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A write transaction in the Q-lease protocol, identified by a tid. Every server keeps its own
 * record of the keys a tid touched there, so this object remembers each server it sent a key to
 * and fans {@link #commit}, {@link #deleteAndRelease} and {@link #release} out to all of them.
 *
 * <p>Two ways to write:
 * <ul>
 *   <li>write-around: {@link #quarantine} each impacted key, write the data store, then
 *       {@link #deleteAndRelease} (the keys are deleted; readers refill them);</li>
 *   <li>refresh: {@link #readForUpdate} each key, {@link RefreshLease#swap swap} in the new value,
 *       write the data store, then {@link #commit} (or {@link #release} to abandon).</li>
 * </ul>
 * Ends report {@link Outcome#STATE_LOST} if any touched server restarted or was disconnected
 * meanwhile: never a silent success. Closing an unended transaction releases it. Not thread-safe.
 */
public final class Transaction implements AutoCloseable {

  private final IqClient client;
  private final String id;
  private final TouchedServers touched = new TouchedServers();
  private final AtomicBoolean ended = new AtomicBoolean();

  Transaction(IqClient client, String id) {
    this.client = client;
    this.id = id;
  }

  /** The tid sent to the servers. */
  public String id() {
    return id;
  }

  /** The servers this transaction has state on. */
  public Set<ServerAddress> servers() {
    return touched.addresses();
  }

  /**
   * Reads a key inside this transaction ({@code iqget} with the tid): a key this transaction
   * quarantined or refreshes reads as {@link ReadResult.NoValue}; one it changed incrementally
   * reads as its staged value.
   */
  public ReadResult read(String key) {
    return client.leaseRead(key, id, client.backoff());
  }

  /** Write-around: takes a shared Q-invalidate lease on the key ({@code qareg}); readers keep the old value until {@link #deleteAndRelease}. */
  public Outcome quarantine(String key) {
    return onKey(key, OutgoingRequest.qareg(key, id));
  }

  /**
   * {@link #quarantine} without waiting for its reply, so that a write-around can quarantine many keys in one round
   * trip. The future fails with {@link IqConnectionException} when the key's server cannot be reached.
   */
  public CompletableFuture<Outcome> quarantineOnce(String key) {
    ensureOpen();
    ServerConnection server = client.connectionFor(key);
    if (!touched.touch(server)) {
      return CompletableFuture.completedFuture(Outcome.STATE_LOST);
    }
    return server.sendInOrder(OutgoingRequest.qareg(key, id)).thenApply(Outcome::of);
  }

  /**
   * Refresh: takes the key's exclusive Q-refresh lease ({@code qaread}), retrying with backoff
   * while another writer holds one.
   */
  public RefreshResult readForUpdate(String key) {
    ensureOpen();
    return client
        .backoff()
        .retry(
            () -> ServerConnection.await(readForUpdateOnce(key)),
            ReadResult.Busy.class::isInstance,
            ReadResult.Busy::new);
  }

  /**
   * One {@code qaread} of the key, without waiting for its reply, so that a writer can have the leases of many
   * keys in flight together; no retry: {@link ReadResult.Busy} when another writer holds a Q lease on it (then
   * {@link #readForUpdate} waits with backoff). The future fails with {@link IqConnectionException} when the
   * key's server cannot be reached.
   */
  public CompletableFuture<RefreshResult> readForUpdateOnce(String key) {
    return readForUpdateOnce(key, client.connectionFor(key));
  }

  /**
   * {@link #readForUpdateOnce(String)} on a server of the caller's choosing: one replica of a key kept on several
   * servers (see {@link ReplicaPlacement#serversFor}).
   */
  public CompletableFuture<RefreshResult> readForUpdateOnce(String key, ServerAddress address) {
    return readForUpdateOnce(key, client.connection(address));
  }

  private CompletableFuture<RefreshResult> readForUpdateOnce(String key, ServerConnection server) {
    ensureOpen();
    long epoch = server.epoch();
    touched.touch(server);
    return server
        .sendInOrder(OutgoingRequest.qaread(key, id))
        .thenApply(
            reply -> {
              long token = -1;
              boolean pending = false;
              CacheValue current = null;
              for (Reply.Entry entry : IqClient.entries(reply)) {
                if (entry instanceof Reply.Lease granted) {
                  if (granted.refused()) {
                    return new ReadResult.Busy(Duration.ZERO);
                  }
                  token = granted.token();
                  pending = granted.pending();
                } else if (entry instanceof Reply.Value value) {
                  current = IqClient.cacheValue(key, value);
                }
              }
              if (token < 0) {
                throw new IqException("qaread of " + key + " returned no lease");
              }
              return new RefreshResult.Granted(
                  new RefreshLease(server, key, token, epoch, pending, current));
            });
  }

  /** Stages an append to the key's value under a Q-incremental lease ({@code iqappend}); {@link Outcome#ABORTED} if another transaction holds a Q lease on it. */
  public Outcome append(String key, byte[] delta) {
    return onKey(key, OutgoingRequest.iqDelta("iqappend", key, delta, id));
  }

  /**
   * One {@code iqappend} without waiting for its reply, so that a writer can stage appends to many keys together:
   * {@link Outcome#OK} when staged, or when the key has no value (the commit then leaves it absent);
   * {@link Outcome#ABORTED} when another transaction holds a Q lease on it; {@link Outcome#STATE_LOST} when the
   * server lost what this transaction held there. The future fails with {@link IqConnectionException} when the
   * key's server cannot be reached.
   */
  public CompletableFuture<Outcome> appendOnce(String key, byte[] delta) {
    ensureOpen();
    ServerConnection server = client.connectionFor(key);
    if (!touched.touch(server)) {
      return CompletableFuture.completedFuture(Outcome.STATE_LOST);
    }
    return server
        .sendInOrder(OutgoingRequest.iqDelta("iqappend", key, delta, id))
        .thenApply(Outcome::of);
  }

  /** Like {@link #append}, at the front ({@code iqprepend}). */
  public Outcome prepend(String key, byte[] delta) {
    return onKey(key, OutgoingRequest.iqDelta("iqprepend", key, delta, id));
  }

  /** Stages an increment of a decimal counter ({@code iqincr}); the new value is visible after commit. */
  public Outcome incr(String key, long delta) {
    return onKey(key, OutgoingRequest.iqArithmetic("iqincr", key, delta, id));
  }

  /** Stages a decrement ({@code iqdecr}). */
  public Outcome decr(String key, long delta) {
    return onKey(key, OutgoingRequest.iqArithmetic("iqdecr", key, delta, id));
  }

  /** Commits without marking the keys pending; see {@link #commit(boolean)}. */
  public Outcome commit() {
    return commit(false);
  }

  /**
   * Applies the staged values and releases the leases on every touched server ({@code commit}).
   *
   * @param pending true marks every key of the transaction pending (TARDIS: a buffered write of it exists; see
   *     {@link PendingMarkers#mark}); false clears the marker of every key whose lease the transaction still holds
   * @return {@link Outcome#OK}; {@link Outcome#EXPIRED} if a server's tid record timed out (its
   *         staged values were discarded); {@link Outcome#STATE_LOST} if a server restarted;
   *         {@link Outcome#PINNED_MEMORY_FULL} if a pinned value, or with {@code pending} the new markers, did not
   *         fit a server's pinned memory. A server refused for the markers applied nothing there, and the
   *         transaction's leases stay until they lapse: mark the keys with {@link PendingMarkers#mark} first, as TARDIS
   *         does, and the commit adds no marker
   */
  public Outcome commit(boolean pending) {
    end();
    return touched.endOnAll(server -> OutgoingRequest.commit(id, pending), Outcome.NOT_FOUND);
  }

  /**
   * {@link #commit()}, sent now so that it goes out with other requests; waiting on the result reads the replies.
   * It never completes exceptionally: a lost reply is {@link Outcome#STATE_LOST}, as with {@code commit}.
   */
  public CompletableFuture<Outcome> commitAsync() {
    end();
    return touched.endOnAllAsync(server -> OutgoingRequest.commit(id, false), Outcome.NOT_FOUND);
  }

  /**
   * {@link #commit(boolean)} with each touched server's own outcome, for a caller that keeps one value on several
   * servers and must tell a lost server from a refusal.
   */
  public Map<ServerAddress, Outcome> commitOnEach(boolean pending) {
    end();
    return touched.endOnEach(server -> OutgoingRequest.commit(id, pending), Outcome.NOT_FOUND);
  }

  /** Write-around's end: deletes every quarantined key and releases the leases ({@code dar}) on every touched server. */
  public Outcome deleteAndRelease() {
    end();
    return touched.endOnAll(server -> OutgoingRequest.dar(id), Outcome.INVALID);
  }

  /** Abandons the transaction: staged values are discarded, leases released ({@code release}). */
  public Outcome release() {
    end();
    return touched.abandonOnAll(server -> OutgoingRequest.release(id), Outcome.NOT_FOUND);
  }

  /** Releases the transaction unless it was already ended. */
  @Override
  public void close() {
    if (!ended.get()) {
      release();
    }
  }

  private Outcome onKey(String key, OutgoingRequest command) {
    ensureOpen();
    return touched.call(client.connectionFor(key), command);
  }

  private void end() {
    if (!ended.compareAndSet(false, true)) {
      throw new IllegalStateException("transaction " + id + " already ended");
    }
  }

  private void ensureOpen() {
    if (ended.get()) {
      throw new IllegalStateException("transaction " + id + " already ended");
    }
  }
}
