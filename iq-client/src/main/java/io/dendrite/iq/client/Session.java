package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A session in the C/O lease protocol, identified by a sid: reads take shared C leases, writes take
 * the key's exclusive O lease and stage their values, and a writer aborts the readers it conflicts
 * with. Every server keeps its own record of the sid, so this object remembers each server it
 * touched and fans {@link #commit}, {@link #abort} and {@link #validate} out to all of them.
 *
 * <p>Any method may report {@link Outcome#ABORTED} / {@link ReadResult.Aborted}: the session lost a
 * conflict and should be ended and retried. Ends report {@link Outcome#STATE_LOST} if a touched
 * server restarted meanwhile. Closing an unended session aborts it. Not thread-safe.
 */
public final class Session implements AutoCloseable {

  private final IqClient client;
  private final String id;
  private final TouchedServers touched = new TouchedServers();
  private final AtomicBoolean ended = new AtomicBoolean();

  /** Set once any server said ABORT: servers may already have forgotten the sid, so commit must not trust their later NOT_FOUND. */
  private volatile boolean aborted;

  Session(IqClient client, String id) {
    this.client = client;
    this.id = id;
  }

  /** The sid sent to the servers. */
  public String id() {
    return id;
  }

  /** The servers this session has state on. */
  public Set<ServerAddress> servers() {
    return touched.addresses();
  }

  /**
   * Reads a key under a shared C lease ({@code ciget}). A miss grants an I lease
   * ({@link ReadResult.Leased}) to fill from the data store; while another reader holds that
   * lease the read is retried with backoff.
   */
  public ReadResult read(String key) {
    ensureOpen();
    ServerConnection server = client.connectionFor(key);
    return client
        .backoff()
        .retry(
            () -> {
              long epoch = server.epoch();
              touched.touch(server);
              return noteAbort(
                  readResult(server, key, epoch, server.call(OutgoingRequest.ciget(id, key))));
            },
            ReadResult.Busy.class::isInstance,
            ReadResult.Busy::new);
  }

  /**
   * Reads a key for update under its exclusive O lease ({@code oqread}), aborting other sessions
   * that read it. {@link ReadResult.NoValue} on a miss (no I lease: this session writes the key).
   */
  public ReadResult readForUpdate(String key) {
    ensureOpen();
    ServerConnection server = client.connectionFor(key);
    long epoch = server.epoch();
    touched.touch(server);
    return noteAbort(readResult(server, key, epoch, server.call(OutgoingRequest.oqread(id, key))));
  }

  /** Stages a new value for a key read with {@link #readForUpdate} ({@code oqswap}); an empty value stages a delete. */
  public Outcome swap(String key, byte[] value) {
    return onKey(key, OutgoingRequest.sessionStore("oqswap", id, key, value, WriteOptions.DEFAULT));
  }

  /** Stages a blind write ({@code oqwrite}), taking the O lease. */
  public Outcome write(String key, byte[] value) {
    return onKey(
        key, OutgoingRequest.sessionStore("oqwrite", id, key, value, WriteOptions.DEFAULT));
  }

  /** Stages a write if the key has no value ({@code oqadd}); {@link Outcome#NOT_STORED} otherwise. */
  public Outcome add(String key, byte[] value) {
    return onKey(key, OutgoingRequest.sessionStore("oqadd", id, key, value, WriteOptions.DEFAULT));
  }

  /** Stages an append to the cached value ({@code oqappend}); {@link Outcome#NOT_STORED} if none is cached. */
  public Outcome append(String key, byte[] delta) {
    return onKey(key, OutgoingRequest.oqappend(id, key, delta));
  }

  /** Registers the key for deletion at commit ({@code oqreg}). */
  public Outcome invalidate(String key) {
    return onKey(key, OutgoingRequest.oqreg(id, key));
  }

  /** Checks on every touched server that the session still holds all its leases ({@code validate}). */
  public Outcome validate() {
    ensureOpen();
    return noteAbort(
        touched.endOnAll(server -> OutgoingRequest.sessionEnd("validate", id), Outcome.NOT_FOUND));
  }

  /**
   * Applies the staged writes and releases everything on every touched server ({@code dcommit}).
   *
   * @return {@link Outcome#OK}; {@link Outcome#ABORTED} if the session had been aborted (nothing
   *         applied there); {@link Outcome#EXPIRED}; {@link Outcome#STATE_LOST}
   */
  public Outcome commit() {
    end();
    if (aborted) {
      touched.endOnAll(server -> OutgoingRequest.sessionEnd("dabort", id), Outcome.NOT_FOUND);
      return Outcome.ABORTED;
    }
    return touched.endOnAll(server -> OutgoingRequest.sessionEnd("dcommit", id), Outcome.NOT_FOUND);
  }

  /** Discards the staged writes and releases everything ({@code dabort}). */
  public Outcome abort() {
    end();
    return touched.endOnAll(server -> OutgoingRequest.sessionEnd("dabort", id), Outcome.NOT_FOUND);
  }

  /** Aborts the session unless it was already ended. */
  @Override
  public void close() {
    if (!ended.get()) {
      abort();
    }
  }

  /** Reads a ciget/oqread reply; {@code RETRY} (another reader's I lease) becomes a busy marker for the backoff. */
  private static ReadResult readResult(
      ServerConnection server, String key, long epoch, Reply reply) {
    if (reply instanceof Reply.Status status) {
      return switch (status.word()) {
        case "RETRY" -> new ReadResult.Busy(Duration.ZERO);
        case "ABORT" -> new ReadResult.Aborted();
        default -> throw new IqException("server answered: " + status.line());
      };
    }
    for (Reply.Entry entry : IqClient.entries(reply)) {
      if (entry instanceof Reply.Value value) {
        return new ReadResult.Hit(IqClient.cacheValue(key, value));
      }
      if (entry instanceof Reply.Lease lease) {
        return new ReadResult.Leased(
            new LeaseHandle(server, key, lease.token(), epoch, lease.pending()));
      }
    }
    return new ReadResult.NoValue();
  }

  private Outcome onKey(String key, OutgoingRequest command) {
    ensureOpen();
    return noteAbort(touched.call(client.connectionFor(key), command));
  }

  private <T> T noteAbort(T result) {
    if (result == Outcome.ABORTED || result instanceof ReadResult.Aborted) {
      aborted = true;
    }
    return result;
  }

  private void end() {
    if (!ended.compareAndSet(false, true)) {
      throw new IllegalStateException("session " + id + " already ended");
    }
  }

  private void ensureOpen() {
    if (ended.get()) {
      throw new IllegalStateException("session " + id + " already ended");
    }
  }
}
