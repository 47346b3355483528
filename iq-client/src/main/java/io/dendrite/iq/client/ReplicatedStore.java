package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Values kept pinned on R distinct servers each, so that they survive the loss of R-1 servers: a view of an {@link
 * IqClient} made by {@link ReplicaPlacement#store}. A key's replicas live on {@link ReplicaPlacement#serversFor}{@code
 * (key, R)}; every change is sent to all of them at once. This class only fans out and reports the worst outcome;
 * exclusion between writers is {@link #lock}'s, or the caller's. Thread-safe, as the client is.
 *
 * <p>Kept beside the client rather than in it because only write-back keeps values this way: the client stays the
 * general memcached and lease client, and the replica count is fixed once per store instead of passed to every call.
 */
public final class ReplicatedStore {
  private final IqClient client;
  private final int replicas;

  ReplicatedStore(IqClient client, int replicas) {
    if (replicas < 1) {
      throw new IllegalArgumentException("replicas must be at least 1, got " + replicas);
    }
    this.client = client;
    this.replicas = replicas;
  }

  /** R: how many servers hold each key. */
  public int replicas() {
    return replicas;
  }

  /** The client this store sends through. */
  public IqClient client() {
    return client;
  }

  /** The servers that hold {@code key}'s replicas, in {@link ReplicaPlacement#serversFor} order. */
  public List<ServerAddress> serversFor(String key) {
    return client.replicaPlacement().serversFor(key, replicas);
  }

  /**
   * {@link ReplicaPlacement#formerServersFor}: where {@code key}'s only copies are when all its own servers are out.
   */
  public List<ServerAddress> formerServersFor(String key) {
    return client.replicaPlacement().formerServersFor(key, replicas);
  }

  /**
   * Stores a pinned copy of the value on every replica, all at once.
   *
   * @return the worst outcome over the replicas
   */
  public Outcome set(String key, byte[] value) {
    return onReplicas(key, () -> OutgoingRequest.store("set", key, value, WriteOptions.PINNED))
        .stream()
        .reduce(Outcome.OK, Outcome::worst);
  }

  /**
   * Async {@link #set}: sends the stores and returns at once, so that they are in flight together with other
   * requests. Completes with the worst outcome once every replica answered, or with the first replica's failure
   * (only after the others answered or timed out).
   */
  public CompletableFuture<Outcome> setAsync(String key, byte[] value) {
    return onReplicasAsync(key, () -> OutgoingRequest.store("set", key, value, WriteOptions.PINNED))
        .thenApply(outcomes -> outcomes.stream().reduce(Outcome.OK, Outcome::worst));
  }

  /** Reads a key from the first of its servers that has it. */
  public Optional<CacheValue> get(String key) {
    for (ServerAddress address : serversFor(key)) {
      Optional<CacheValue> found;
      try {
        found = ServerConnection.await(IqClient.getFrom(client.connection(address), key));
      } catch (IqConnectionException unreachable) {
        continue;
      }
      if (found.isPresent()) {
        return found;
      }
    }
    return Optional.empty();
  }

  /**
   * Appends several values to a key on each of its servers (a pinned {@code mappend}, Dendrite's server only),
   * creating it where absent; for logs that must survive one server's loss. Replicas may hold the appended values
   * in different orders.
   *
   * @return the worst outcome over the replicas
   */
  public Outcome append(String key, List<byte[]> values) {
    return onReplicas(key, () -> OutgoingRequest.mappend(key, true, values)).stream()
        .reduce(Outcome.OK, Outcome::worst);
  }

  /**
   * Async {@link #append}: sends the appends and returns at once, so that they are in flight together with other
   * requests. Completes with the worst outcome once every replica answered, or with the first replica's failure
   * (only after the others answered or timed out).
   */
  public CompletableFuture<Outcome> appendAsync(String key, List<byte[]> values) {
    return onReplicasAsync(key, () -> OutgoingRequest.mappend(key, true, values))
        .thenApply(outcomes -> outcomes.stream().reduce(Outcome.OK, Outcome::worst));
  }

  /**
   * Reads a key from each of its servers, for values that must be merged rather than taken from one replica (an
   * appended log whose replica on a restarted server holds only recent appends).
   *
   * @return the values found, in {@link #serversFor} order; unreachable servers and misses left out
   */
  public List<CacheValue> getEach(String key) {
    List<CacheValue> found = new ArrayList<>();
    for (ServerAddress address : serversFor(key)) {
      try {
        ServerConnection.await(IqClient.getFrom(client.connection(address), key))
            .ifPresent(found::add);
      } catch (IqConnectionException unreachable) {
        // that replica is lost; the others hold what was acknowledged
      }
    }
    return found;
  }

  /**
   * Reads many keys at once: every server that holds a replica of some key gets one pipelined {@code gets}, all in
   * flight together, and each key's value is taken from the first of its servers, in {@link #serversFor} order,
   * that has it, as {@link #get} would.
   *
   * @return the hits; a key that no reachable replica holds is absent, also when none of its servers is reachable
   *     (as with {@link #get}: a lost server is taken to have lost its values)
   */
  public Map<String, CacheValue> getAll(Collection<String> keys) {
    Map<String, CacheValue> values = new HashMap<>();
    getAllOnEach(keys)
        .forEach(
            (key, found) ->
                found.values().stream().findFirst().ifPresent(value -> values.put(key, value)));
    return values;
  }

  /**
   * Reads many keys from every one of their servers at once (one pipelined {@code gets} per server, as {@link
   * #getAll}), for values that must be merged rather than taken from one replica.
   *
   * @return per key that some reachable replica holds, its values by server in {@link #serversFor} order;
   *     unreachable servers and misses left out
   */
  public Map<String, Map<ServerAddress, CacheValue>> getAllOnEach(Collection<String> keys) {
    return ServerConnection.await(getAllOnEachAsync(keys));
  }

  /**
   * Async {@link #getAllOnEach}: sends the reads and returns at once, so that they are in flight together with
   * other requests; completes once every server answered or failed.
   */
  public CompletableFuture<Map<String, Map<ServerAddress, CacheValue>>> getAllOnEachAsync(
      Collection<String> keys) {
    Map<String, List<ServerAddress>> serversOf = new LinkedHashMap<>();
    Map<ServerAddress, List<String>> byServer = new LinkedHashMap<>();
    for (String key : keys) {
      List<ServerAddress> servers = serversFor(key);
      serversOf.put(key, servers);
      servers.forEach(
          address -> byServer.computeIfAbsent(address, a -> new ArrayList<>()).add(key));
    }
    Map<ServerAddress, List<CompletableFuture<Reply>>> sent = new LinkedHashMap<>();
    byServer.forEach(
        (address, serverKeys) ->
            sent.put(address, IqClient.sendGets(client.connection(address), serverKeys)));
    List<CompletableFuture<Reply>> all = sent.values().stream().flatMap(List::stream).toList();
    return ReplyFuture.allOf(all).handle((done, failed) -> copiesByKey(serversOf, sent));
  }

  /** The replies of {@link #getAllOnEachAsync}, all in, as copies by key and server. */
  private static Map<String, Map<ServerAddress, CacheValue>> copiesByKey(
      Map<String, List<ServerAddress>> serversOf,
      Map<ServerAddress, List<CompletableFuture<Reply>>> sent) {
    Map<ServerAddress, Map<String, CacheValue>> found = new HashMap<>();
    for (Map.Entry<ServerAddress, List<CompletableFuture<Reply>>> server : sent.entrySet()) {
      Map<String, CacheValue> hits = new HashMap<>();
      try {
        server
            .getValue()
            .forEach(reply -> IqClient.addHits(ServerConnection.completed(reply), hits));
        found.put(server.getKey(), hits);
      } catch (IqConnectionException lost) {
        // that server's replicas are lost; the others hold what was acknowledged
      }
    }
    Map<String, Map<ServerAddress, CacheValue>> values = new LinkedHashMap<>();
    for (Map.Entry<String, List<ServerAddress>> key : serversOf.entrySet()) {
      Map<ServerAddress, CacheValue> copies = new LinkedHashMap<>();
      for (ServerAddress address : key.getValue()) {
        CacheValue value = found.getOrDefault(address, Map.of()).get(key.getKey());
        if (value != null) {
          copies.put(address, value);
        }
      }
      if (!copies.isEmpty()) {
        values.put(key.getKey(), copies);
      }
    }
    return values;
  }

  /**
   * Takes the exclusive Q-refresh lease of every key on every one of its servers, waiting with backoff while
   * another holder keeps one, for values changed only together; see {@link ReplicatedTransaction}.
   *
   * @param timeout how long to keep trying while a lease is held elsewhere or a replica's server does not answer
   * @throws IqException when the leases could not be taken within {@code timeout}
   */
  public ReplicatedTransaction lock(Collection<String> keys, Duration timeout) {
    return ReplicatedTransaction.lock(client, keys, replicas, timeout);
  }

  /**
   * Async {@link #delete}: sends the deletes and returns at once, so that the deletes of many keys are in flight
   * together.
   */
  public CompletableFuture<Outcome> deleteAsync(String key) {
    return onReplicasAsync(key, () -> OutgoingRequest.delete(key))
        .thenApply(ReplicatedStore::deleteOutcome);
  }

  /** Deletes every replica of a key; {@link Outcome#OK} if at least one was deleted and none failed. */
  public Outcome delete(String key) {
    return deleteOutcome(onReplicas(key, () -> OutgoingRequest.delete(key)));
  }

  private static Outcome deleteOutcome(List<Outcome> outcomes) {
    Outcome worst =
        outcomes.stream()
            .filter(outcome -> outcome != Outcome.NOT_FOUND)
            .reduce(Outcome.OK, Outcome::worst);
    return worst != Outcome.OK || outcomes.contains(Outcome.OK) ? worst : Outcome.NOT_FOUND;
  }

  /** Sends a fresh command to every replica at once, then collects their outcomes. */
  private List<Outcome> onReplicas(String key, Supplier<OutgoingRequest> command) {
    return every(sendToReplicas(key, command), ServerConnection::await);
  }

  /**
   * Sends a fresh command to every replica at once; completes with their outcomes, or with the first replica's
   * failure, only once every replica answered or timed out: a caller that looks at the replicas after a failure
   * must not overtake requests still in flight to the others.
   */
  private CompletableFuture<List<Outcome>> onReplicasAsync(
      String key, Supplier<OutgoingRequest> command) {
    List<CompletableFuture<Outcome>> pending = sendToReplicas(key, command);
    return ReplyFuture.allOf(pending)
        .handle((done, failed) -> every(pending, ServerConnection::completed));
  }

  private List<CompletableFuture<Outcome>> sendToReplicas(
      String key, Supplier<OutgoingRequest> command) {
    return serversFor(key).stream()
        .map(address -> client.connection(address).send(command.get()).thenApply(Outcome::of))
        .toList();
  }

  /** Every outcome read by {@code read}, or the first failure once all were read. */
  private static List<Outcome> every(
      List<CompletableFuture<Outcome>> pending,
      Function<CompletableFuture<Outcome>, Outcome> read) {
    List<Outcome> outcomes = new ArrayList<>(pending.size());
    RuntimeException first = null;
    for (CompletableFuture<Outcome> outcome : pending) {
      try {
        outcomes.add(read.apply(outcome));
      } catch (RuntimeException failure) {
        first = first == null ? failure : first;
      }
    }
    if (first != null) {
      throw first;
    }
    return outcomes;
  }
}
