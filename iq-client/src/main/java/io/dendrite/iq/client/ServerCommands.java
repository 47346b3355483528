package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Commands sent to one given server of an {@link IqClient} instead of the server its hash ring picks for the key, got
 * from {@link IqClient#servers()}. For code that keeps copies of a value on servers it chose itself and must read,
 * write or repair each copy where it is: write-back's pinned replicas and locks, {@link TierClaim}s, replica repair
 * that watches the servers ({@link #stats}, {@link #isDown}). An ordinary cache user names keys, not servers, and
 * needs none of this. Thread-safe, as the client is.
 */
public final class ServerCommands {
  private final IqClient client;

  /** When {@link #isDown} last found each server down ({@link System#nanoTime()}). */
  private final Map<ServerAddress, Long> downSeenAt = new ConcurrentHashMap<>();

  ServerCommands(IqClient client) {
    this.client = client;
  }

  /** Reads a key from one given server, with its CAS unique (for {@link #casOn}). */
  public Optional<CacheValue> getOn(ServerAddress server, String key) {
    return ServerConnection.await(getOnAsync(server, key));
  }

  /** Async {@link #getOn}. */
  public CompletableFuture<Optional<CacheValue>> getOnAsync(ServerAddress server, String key) {
    return IqClient.getFrom(client.connection(server), OutgoingRequest.checkKey(key));
  }

  /**
   * Stores on one given server only if the key is absent there ({@code add}): for a record kept on each replica
   * that only one writer may create.
   *
   * @return {@link Outcome#OK}, {@link Outcome#NOT_STORED} (present) or {@link Outcome#PINNED_MEMORY_FULL}
   */
  public Outcome addOn(ServerAddress server, String key, byte[] value, WriteOptions options) {
    return ServerConnection.await(addOnAsync(server, key, value, options));
  }

  /** Async {@link #addOn}. */
  public CompletableFuture<Outcome> addOnAsync(
      ServerAddress server, String key, byte[] value, WriteOptions options) {
    return client
        .connection(server)
        .send(OutgoingRequest.store("add", OutgoingRequest.checkKey(key), value, options))
        .thenApply(Outcome::of);
  }

  /**
   * Stores on one given server only if nobody wrote the key there since {@code cas} was read from it: for
   * rewriting one replica of a replicated value (see {@link ReplicatedStore#getAllOnEach}).
   *
   * @return {@link Outcome#OK}, {@link Outcome#EXISTS} (lost the race) or {@link Outcome#NOT_FOUND}
   */
  public Outcome casOn(
      ServerAddress server, String key, byte[] value, long cas, WriteOptions options) {
    return ServerConnection.await(casOnAsync(server, key, value, cas, options));
  }

  /** Async {@link #casOn}. */
  public CompletableFuture<Outcome> casOnAsync(
      ServerAddress server, String key, byte[] value, long cas, WriteOptions options) {
    return client
        .connection(server)
        .send(OutgoingRequest.cas(OutgoingRequest.checkKey(key), value, options, cas))
        .thenApply(Outcome::of);
  }

  /**
   * Appends several values to a key on one given server only (a pinned {@code mappend}, creating it where absent):
   * for restoring one replica of a replicated log (see {@link ReplicatedStore#getAllOnEach}).
   *
   * @return the outcome on that server
   */
  public Outcome appendOn(ServerAddress server, String key, List<byte[]> values) {
    return Outcome.of(client.connection(server).call(OutgoingRequest.mappend(key, true, values)));
  }

  /**
   * Appends {@code value} to the key on one given server with memcached's plain {@code append} (unpinned): for a
   * replicated log on servers without {@code mappend} (stock memcached).
   *
   * @return {@link Outcome#OK}; {@link Outcome#NOT_STORED} when the key is absent there, and also, on stock memcached,
   *     when it had no memory for the longer value (it cannot tell the two apart); {@link Outcome#MEMORY_FULL}
   */
  public CompletableFuture<Outcome> appendOnAsync(ServerAddress server, String key, byte[] value) {
    return client
        .connection(server)
        .send(
            OutgoingRequest.store(
                "append", OutgoingRequest.checkKey(key), value, WriteOptions.DEFAULT))
        .thenApply(Outcome::of);
  }

  /** Deletes a key on one given server only. */
  public Outcome deleteOn(ServerAddress server, String key) {
    return Outcome.of(
        client.connection(server).call(OutgoingRequest.delete(OutgoingRequest.checkKey(key))));
  }

  /**
   * Deletes the key on one given server only if nobody wrote it there since {@code cas} was read ({@code md <key>
   * C<cas>}, memcached 1.6's meta delete; Dendrite's server lacks meta commands). It needs no memory, so it works on
   * a memcached that is full.
   *
   * @return {@link Outcome#OK}, {@link Outcome#EXISTS} (changed since) or {@link Outcome#NOT_FOUND}
   */
  public CompletableFuture<Outcome> deleteIfUnchangedOnAsync(
      ServerAddress server, String key, long cas) {
    return client
        .connection(server)
        .send(OutgoingRequest.deleteIfUnchanged(OutgoingRequest.checkKey(key), cas))
        .thenApply(Outcome::of);
  }

  /**
   * The {@code stats} of one server, by name: {@code run_id} (Dendrite's server) or {@code pid} with {@code time}
   * minus {@code uptime} tell one run of it from the next.
   *
   * @throws IqConnectionException when the server is down or does not answer in time
   */
  public Map<String, String> stats(ServerAddress server) {
    Map<String, String> stats = new LinkedHashMap<>();
    for (Reply.Entry entry :
        IqClient.entries(client.connection(server).call(OutgoingRequest.stats()))) {
      if (entry instanceof Reply.Stat stat) {
        stats.put(stat.name(), stat.value());
      }
    }
    return stats;
  }

  /**
   * Whether {@code address} is down: a fresh request to it is refused or dropped. A server that does not answer in
   * time is <em>not</em> down (see {@link IqConnectionException#timedOut()}): it may still hold its values.
   */
  public boolean isDown(ServerAddress address) {
    try {
      ServerConnection.await(client.connection(address).send(OutgoingRequest.stats()));
      return false;
    } catch (IqConnectionException failed) {
      if (failed.timedOut()) {
        return false;
      }
      downSeenAt.put(address, System.nanoTime());
      return true;
    }
  }

  /**
   * When {@link #isDown} last found {@code server} down ({@link System#nanoTime()}), if ever: a caller that then
   * left the server's replicas out of a change needs it to know that the server may hold older copies if it
   * answers again as the same run.
   */
  public OptionalLong downSeenAt(ServerAddress server) {
    Long at = downSeenAt.get(server);
    return at == null ? OptionalLong.empty() : OptionalLong.of(at);
  }
}
