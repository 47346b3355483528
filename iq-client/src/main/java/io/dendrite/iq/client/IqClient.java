package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * Client for a set of IQ lease cache servers (Dendrite's own, IQ-Twemcached, or plain memcached for
 * the standard commands). Thread-safe; create one per application and {@link #close()} it at the end.
 *
 * <p>Keys are spread over the servers by consistent hashing. Each server is reached over a few
 * pipelined connections shared by all threads. Plain memcached operations come in blocking and
 * {@code *Async} forms; the lease protocol is exposed through {@link #read}, {@link Transaction}
 * and {@link Session}, whose results are typed ({@link ReadResult}, {@link Outcome}) rather than
 * nulls or booleans.
 *
 * <p>There are no I/O threads in the request path: a request is written by the calling thread, and its reply is
 * read by the thread that waits for it, so a blocking call costs one write and one read and no thread hand-off.
 * Async requests are sent at once; {@code get()} or {@code join()} on their futures reads the reply in the calling
 * thread, and a reply that no thread waits for is read by a background thread within about
 * {@code 2 ms}, which then completes the future and runs its callbacks.
 *
 * <p>Stores always carry IQ-Twemcached's pinning field after {@code <bytes>} (stock memcached
 * ignores it), except unpinned {@code cas}, where memcached would mistake it for the CAS unique.
 *
 * <pre>{@code
 * try (IqClient client = IqClient.builder().servers("127.0.0.1:11211", "127.0.0.1:11212").build()) {
 *     ReadResult r = client.read("user:42");
 *     if (r instanceof ReadResult.Hit hit) { use(hit.value()); }
 *     else if (r instanceof ReadResult.Leased leased) {
 *         try (LeaseHandle lease = leased.lease()) { lease.fill(loadFromDatabase()); }
 *     }
 * }
 * }</pre>
 */
public final class IqClient implements AutoCloseable {

  /** Keys per {@code gets} line: long multi-gets are split so no server line limit is hit. */
  private static final int KEYS_PER_GET = 100;

  private final IqClientConfig config;
  private final BackgroundReader background = new BackgroundReader();
  private final Map<ServerAddress, ServerConnection> connections = new LinkedHashMap<>();
  private final HashRing ring;
  private final ReplicaPlacement placement;
  private final Map<ServerAddress, Long> downSeenAt = new ConcurrentHashMap<>();

  /** Servers that answered {@code mappend} with {@code ERROR}: {@link #appendAll} appends one value at a time. */
  private final Set<ServerAddress> withoutMultiAppend = ConcurrentHashMap.newKeySet();

  /** The parties that copy pinned values off leaving servers ({@link #joinHandovers}); also their lock. */
  private final Set<HandoverParty> handoverParties = ConcurrentHashMap.newKeySet();

  /** When a server was last put back into replica placement ({@link #includeInReplicas}); guarded by placement. */
  private long lastIncludedNanos = System.nanoTime();

  // Per sending thread, so that a caller sharing the client across threads can attribute round
  // trips to its own operations (a benchmark binding counts cache round trips per operation type
  // this way).
  private final ThreadLocal<ThreadTrips> tripsOfThread = ThreadLocal.withInitial(ThreadTrips::new);

  private IqClient(IqClientConfig config) {
    this.config = config;
    for (ServerAddress server : config.servers()) {
      connections.put(
          server,
          new ServerConnection(
              server,
              config.connectionsPerServer(),
              config.connectTimeout(),
              config.requestTimeout(),
              config.login(),
              config.tls(),
              background,
              tripsOfThread));
    }
    this.ring = new HashRing(config.servers(), config.pointsPerServer());
    this.placement = new ReplicaPlacement(ring, config.servers().size());
  }

  /** Starts configuring a client. */
  public static Builder builder() {
    return new Builder();
  }

  /** Opens a client with a finished configuration. Connections are made lazily, on first use. */
  public static IqClient open(IqClientConfig config) {
    return new IqClient(config);
  }

  /** The configuration this client runs with. */
  public IqClientConfig config() {
    return config;
  }

  /**
   * How many requests the calling thread has sent to the servers through this client so far, each one round trip
   * (a multi-get counts once per server it asks; a retried read once per attempt). The difference across a call
   * is that call's round trips, even while other threads use the same client.
   */
  public long requestsOfCurrentThread() {
    return tripsOfThread.get().requests;
  }

  /**
   * How many round trips the calling thread has awaited through this client so far: requests it sent together,
   * before waiting for any reply, count as one; a request sent after it had to wait for a reply starts the next.
   * The difference across a call is the length of that call's chain of dependent requests, which is what its
   * latency is made of, however many requests each step sends at once.
   */
  public long roundTripsOfCurrentThread() {
    return tripsOfThread.get().roundTrips;
  }

  /**
   * How many writes to a connection the calling thread has made through this client so far: one per request it
   * sent, except that the requests a {@link Flight} held go out in one write per connection.
   */
  public long writesOfCurrentThread() {
    return tripsOfThread.get().writes;
  }

  /**
   * Opens a flight for the calling thread: the requests it sends (through any client) until the flight closes are
   * written together, one write per connection, when the thread first waits for a reply or the flight closes. See
   * {@link Flight} for what the thread must not do meanwhile.
   */
  public Flight flight() {
    return Flight.open();
  }

  // ---------------------------------------------------------------- plain memcached commands

  /** Reads a key ({@code gets}, so the value carries its CAS unique). */
  public Optional<CacheValue> get(String key) {
    return ServerConnection.await(getAsync(key));
  }

  /** Async {@link #get}. */
  public CompletableFuture<Optional<CacheValue>> getAsync(String key) {
    return getFrom(connectionFor(key), key);
  }

  /**
   * Reads many keys: one pipelined {@code gets} per server (split every {@value #KEYS_PER_GET}
   * keys), all in flight at once.
   *
   * @return the hits; missing keys are absent from the map
   */
  public Map<String, CacheValue> getAll(Collection<String> keys) {
    return hitsOf(sendGetsByServer(keys));
  }

  /** Async {@link #getAll}. */
  public CompletableFuture<Map<String, CacheValue>> getAllAsync(Collection<String> keys) {
    List<CompletableFuture<Reply>> replies = sendGetsByServer(keys);
    return ReplyFuture.allOf(replies)
        .thenApply(
            done -> {
              Map<String, CacheValue> hits = new HashMap<>();
              replies.forEach(reply -> addHits(ServerConnection.completed(reply), hits));
              return hits;
            });
  }

  private List<CompletableFuture<Reply>> sendGetsByServer(Collection<String> keys) {
    Map<ServerConnection, List<String>> byServer = new HashMap<>();
    for (String key : keys) {
      byServer.computeIfAbsent(connectionFor(key), s -> new ArrayList<>()).add(key);
    }
    List<CompletableFuture<Reply>> replies = new ArrayList<>();
    byServer.forEach((server, serverKeys) -> replies.addAll(sendGets(server, serverKeys)));
    return replies;
  }

  private static Map<String, CacheValue> hitsOf(List<CompletableFuture<Reply>> replies) {
    Map<String, CacheValue> hits = new HashMap<>();
    replies.forEach(reply -> addHits(ServerConnection.await(reply), hits));
    return hits;
  }

  /** Stores a value unconditionally with default options. */
  public Outcome set(String key, byte[] value) {
    return set(key, value, WriteOptions.DEFAULT);
  }

  /** Stores a value unconditionally ({@code set}). Note: plain writes neither respect nor void leases. */
  public Outcome set(String key, byte[] value, WriteOptions options) {
    return ServerConnection.await(setAsync(key, value, options));
  }

  /** Async {@link #set(String, byte[], WriteOptions)}. */
  public CompletableFuture<Outcome> setAsync(String key, byte[] value, WriteOptions options) {
    return store("set", key, value, options);
  }

  /** Stores a pinned value: the server will not evict it. {@link Outcome#PINNED_MEMORY_FULL} if over quota. */
  public Outcome setPinned(String key, byte[] value) {
    return set(key, value, WriteOptions.PINNED);
  }

  /** Stores only if the key is absent ({@code add}); {@link Outcome#NOT_STORED} otherwise. */
  public Outcome add(String key, byte[] value, WriteOptions options) {
    return ServerConnection.await(store("add", key, value, options));
  }

  /** Appends to an existing value ({@code append}); {@link Outcome#NOT_STORED} if absent. */
  public Outcome append(String key, byte[] value) {
    return ServerConnection.await(store("append", key, value, WriteOptions.DEFAULT));
  }

  /**
   * Appends several values to one key, creating the key if it is absent: in one request ({@code mappend}) on
   * Dendrite's server. A server without {@code mappend} (IQ-Twemcached, memcached) answers {@code ERROR}; the client
   * then remembers that server and appends one value at a time there ({@code append}, or {@code add} where the key
   * is absent), which is not atomic: another client may see some of the values before the rest.
   *
   * @param pinned whether the resulting value is pinned
   */
  public Outcome appendAll(String key, List<byte[]> values, boolean pinned) {
    if (values.isEmpty()) { // here too: the one-value-at-a-time path builds no mappend
      throw new IllegalArgumentException("nothing to append");
    }
    ServerConnection server = connectionFor(key);
    if (!withoutMultiAppend.contains(server.address())) {
      Reply reply = server.call(OutgoingRequest.mappend(key, pinned, values));
      if (!(reply instanceof Reply.Status status && status.line().equals("ERROR"))) {
        return Outcome.of(reply);
      }
      // Its connection is closed: the server reads the values as commands and answers each.
      withoutMultiAppend.add(server.address());
    }
    WriteOptions options = pinned ? WriteOptions.PINNED : WriteOptions.DEFAULT;
    Outcome worst = Outcome.OK;
    for (byte[] value : values) {
      worst = worst.worst(appendOrAdd(key, value, options));
    }
    return worst;
  }

  /** One value appended, or stored where the key is absent; a racing {@code add} makes it append again. */
  private Outcome appendOrAdd(String key, byte[] value, WriteOptions options) {
    while (true) {
      Outcome appended = ServerConnection.await(store("append", key, value, options));
      if (appended != Outcome.NOT_STORED) {
        return appended;
      }
      Outcome added = add(key, value, options);
      if (added != Outcome.NOT_STORED) {
        return added;
      }
    }
  }

  /**
   * Appends several values to a key on one given server only (a pinned {@code mappend}, creating it where absent):
   * for restoring one replica of a replicated log (see {@link ReplicatedStore#getAllOnEach}).
   *
   * @return the outcome on that server
   */
  public Outcome appendOn(ServerAddress server, String key, List<byte[]> values) {
    return Outcome.of(connection(server).call(OutgoingRequest.mappend(key, true, values)));
  }

  /**
   * The {@code stats} of one server, by name: {@code run_id} (Dendrite's server) or {@code pid} with {@code time}
   * minus {@code uptime} tell one run of it from the next.
   *
   * @throws IqConnectionException when the server is down or does not answer in time
   */
  public Map<String, String> stats(ServerAddress server) {
    Map<String, String> stats = new LinkedHashMap<>();
    for (Reply.Entry entry : entries(connection(server).call(OutgoingRequest.stats()))) {
      if (entry instanceof Reply.Stat stat) {
        stats.put(stat.name(), stat.value());
      }
    }
    return stats;
  }

  /**
   * Stores only if nobody wrote since {@code cas} was read.
   *
   * @return {@link Outcome#OK}, {@link Outcome#EXISTS} (lost the race) or {@link Outcome#NOT_FOUND}
   */
  public Outcome cas(String key, byte[] value, long cas, WriteOptions options) {
    return ServerConnection.await(
        connectionFor(key)
            .send(OutgoingRequest.cas(key, value, options, cas))
            .thenApply(Outcome::of));
  }

  /** Deletes a key; on IQ servers this also voids its leases. {@link Outcome#NOT_FOUND} if absent. */
  public Outcome delete(String key) {
    return Outcome.of(connectionFor(key).call(OutgoingRequest.delete(key)));
  }

  /** Unpins a key (Dendrite's server only) so that it may be evicted again. */
  public Outcome unpin(String key) {
    return Outcome.of(connectionFor(key).call(OutgoingRequest.unpin(key)));
  }

  /**
   * Sets the key's pending marker ({@code pmark}, Dendrite's server): from now on every lease on the key says {@link
   * LeaseHandle#pending() pending}, until a holder clears it ({@link LeaseHandle#fill}, {@link
   * Transaction#commit(boolean) commit(false)}). TARDIS marks a key this way before it buffers a write of it, and
   * takes the key's Q lease first ({@link Transaction#readForUpdate}), so that no reader told "not pending" before
   * the mark fills the key, nor another writer clears the mark meanwhile. Needs a login that may pin items where the
   * server restricts pinning ({@code --pin-users}).
   *
   * @return {@link Outcome#OK}, or {@link Outcome#PINNED_MEMORY_FULL} when the marker does not fit the server's
   *     pinned memory (nothing is marked)
   * @throws IqException when the server refuses (not a pin user; a server without {@code pmark})
   */
  public Outcome pmark(String key) {
    return Outcome.of(connectionFor(key).call(OutgoingRequest.pmark(key)));
  }

  /**
   * Tells {@code server} that its pending markers are complete ({@code pready}, Dendrite's server): a restart lost
   * them, and until this call its leases all say {@link LeaseHandle#pending() pending}. Send it once every key known
   * to have a buffered write is marked again ({@link #pmark}); sending it earlier makes the server answer "not
   * pending" for keys whose markers are still missing. Needs a login that may pin items where the server restricts
   * pinning ({@code --pin-users}).
   *
   * @throws IqException when the server refuses (not a pin user; a server without {@code pready})
   */
  public void pready(ServerAddress server) {
    Reply reply = connection(server).call(OutgoingRequest.pready());
    if (!(reply instanceof Reply.Status status && status.line().equals("OK"))) {
      String line = reply instanceof Reply.Status status ? status.line() : String.valueOf(reply);
      throw new IqException(server + " did not take pready: " + line);
    }
  }

  /**
   * Joins the parties of this client that copy the pinned values they keep replicas of off a leaving server (one
   * per write-back engine's replica repair): the server is told {@code pmoved} ({@link HandoverParty#moved}) only
   * once every party says it has copied. Close the party to leave.
   */
  public HandoverParty joinHandovers() {
    HandoverParty party = new HandoverParty();
    handoverParties.add(party);
    return party;
  }

  /**
   * One party to the handovers of leaving servers ({@link #joinHandovers}). A leaving server ({@code stats leaving
   * 1}) waits before it stops until every connection that stored pinned items on it said {@code pmoved}, "every
   * pinned value I keep a replica of here is now copied to the servers that replace this one", or closed.
   */
  public final class HandoverParty implements AutoCloseable {
    private final Set<ServerAddress> moved = ConcurrentHashMap.newKeySet();

    private HandoverParty() {}

    /**
     * This party has copied every pinned value it keeps a replica of on {@code server} to the servers that replace
     * it. Once every party of the client said so (since the server was last told), the server is told {@code
     * pmoved} on each of the client's connections to it, and every party has to say it again before it is told
     * again.
     *
     * @return whether the server was told now and took it on every open connection (false: another party has not
     *     copied yet, no connection is open, or the server is not leaving or does not know {@code pmoved})
     * @throws IqConnectionException when the server cannot be reached
     */
    public boolean moved(ServerAddress server) {
      synchronized (handoverParties) {
        moved.add(server);
        for (HandoverParty party : handoverParties) {
          if (!party.moved.contains(server)) {
            return false;
          }
        }
        handoverParties.forEach(party -> party.moved.remove(server));
      }
      List<Reply> replies = connection(server).callOnEveryOpen(OutgoingRequest::pmoved);
      return !replies.isEmpty()
          && replies.stream()
              .allMatch(
                  reply -> reply instanceof Reply.Status status && status.line().equals("OK"));
    }

    /** Takes back what this party said with {@link #moved}: it has copying to do again. */
    public void notMoved() {
      synchronized (handoverParties) {
        moved.clear();
      }
    }

    @Override
    public void close() {
      synchronized (handoverParties) {
        handoverParties.remove(this);
      }
    }
  }

  /**
   * Adds to a decimal counter ({@code incr}).
   *
   * @return the new value, or empty if the key is absent
   */
  public OptionalLong incr(String key, long delta) {
    Reply reply = connectionFor(key).call(OutgoingRequest.incr(key, delta));
    if (reply instanceof Reply.Status status
        && !status.line().isEmpty()
        && Character.isDigit(status.line().charAt(0))) {
      return OptionalLong.of(Long.parseUnsignedLong(status.line()));
    }
    Outcome outcome = Outcome.of(reply);
    if (outcome == Outcome.NOT_FOUND) {
      return OptionalLong.empty();
    }
    throw new IqException("unexpected incr reply " + reply);
  }

  // ---------------------------------------------------------------- replication

  /**
   * The {@code replicas} distinct servers a replicated key lives on: its owner on the ring, then
   * the next distinct servers clockwise, skipping those {@linkplain #excludeFromReplicas taken out} (fewer when
   * fewer servers are left in placement).
   */
  public List<ServerAddress> serversFor(String key, int replicas) {
    return placement.serversFor(key, replicas);
  }

  /**
   * The servers {@linkplain #excludeFromReplicas taken out} of placement that held {@code key}'s copies before, when
   * every one of its own {@code replicas} servers is out (e.g. all of them were cut off by the network and came back
   * as the same runs): their copies are then the only ones. Empty while one of the key's own servers is in placement.
   */
  public List<ServerAddress> formerServersFor(String key, int replicas) {
    return placement.formerServersFor(key, replicas);
  }

  /**
   * Takes {@code server} out of replica placement, e.g. one that has been down too long: every replicated key that
   * had a copy there gets the next server clockwise instead (see {@link #serversFor}), which the caller must fill
   * with a copy to have R copies again. Plain (unreplicated) keys stay where they are. Placement is this client's
   * own: clients that disagree about it still meet on the key's live servers, because taking a down server out
   * only appends the next server to a key's placement.
   *
   * @return whether it was in placement (false also when it is the last server left in)
   */
  public boolean excludeFromReplicas(ServerAddress server) {
    requireKnown(server);
    return placement.exclude(server);
  }

  /**
   * Puts {@code server} back into replica placement, e.g. once it answers again as a new, empty run; the caller
   * must restore its copies. The copies its substitutes hold meanwhile are left outside placement; {@link
   * #deleteStrayReplicas} deletes them once no holder can still be writing them.
   *
   * @return whether it was out
   */
  public boolean includeInReplicas(ServerAddress server) {
    requireKnown(server);
    synchronized (placement.changes) {
      boolean included = placement.include(server);
      if (included) {
        lastIncludedNanos = System.nanoTime();
      }
      return included;
    }
  }

  /** The servers {@linkplain #excludeFromReplicas taken out} of replica placement. */
  public Set<ServerAddress> excludedFromReplicas() {
    return placement.excluded();
  }

  /** Counts every change of replica placement: copies must be restored after each. */
  public long replicaPlacementVersion() {
    return placement.version();
  }

  /**
   * Deletes the copies that servers hold for keys they substituted for while another server was out of placement,
   * and that are outside the keys' placement now that it is back: a stale copy there would be read if the same
   * server substituted for the key again. Deletes only once every holder that may still write such a copy is
   * fenced: the server's lease lifetime ({@code stats lease_ms}) and twice the request timeout after the last
   * {@link #includeInReplicas}. A server that cannot be reached keeps its strays for the next call.
   *
   * @return how many copies were deleted
   */
  public int deleteStrayReplicas() {
    int deleted = 0;
    synchronized (placement.changes) {
      for (ServerAddress server : placement.substitutes()) {
        List<String> strays = placement.strays(server);
        if (strays.isEmpty()) {
          continue;
        }
        try {
          long leaseMillis = Long.parseLong(stats(server).getOrDefault("lease_ms", "0"));
          long fencedAt =
              lastIncludedNanos
                  + TimeUnit.MILLISECONDS.toNanos(leaseMillis)
                  + 2 * config.requestTimeout().toNanos();
          if (System.nanoTime() - fencedAt < 0) {
            continue;
          }
          ServerConnection connection = connections.get(server);
          List<CompletableFuture<Outcome>> sent =
              strays.stream()
                  .map(key -> connection.send(OutgoingRequest.delete(key)).thenApply(Outcome::of))
                  .toList();
          for (int i = 0; i < strays.size(); i++) {
            Outcome outcome = ServerConnection.await(sent.get(i));
            if (outcome == Outcome.OK || outcome == Outcome.NOT_FOUND) {
              placement.deleted(server, strays.get(i));
              deleted += outcome == Outcome.OK ? 1 : 0;
            }
          }
        } catch (IqConnectionException unreachable) {
          // kept for the next call
        }
      }
    }
    return deleted;
  }

  /**
   * A view of this client that keeps each key pinned on {@code replicas} distinct servers (see {@link
   * #serversFor}), for values that must survive the loss of {@code replicas - 1} servers.
   */
  public ReplicatedStore replicated(int replicas) {
    return new ReplicatedStore(this, replicas);
  }

  private void requireKnown(ServerAddress server) {
    if (!connections.containsKey(server)) {
      throw new IllegalArgumentException(
          server + " is not one of this client's servers " + config.servers());
    }
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
    return connection(server)
        .send(OutgoingRequest.cas(OutgoingRequest.checkKey(key), value, options, cas))
        .thenApply(Outcome::of);
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
    return connection(server)
        .send(OutgoingRequest.store("add", OutgoingRequest.checkKey(key), value, options))
        .thenApply(Outcome::of);
  }

  /**
   * Appends {@code value} to the key on one given server with memcached's plain {@code append} (unpinned): for a
   * replicated log on servers without {@code mappend} (stock memcached).
   *
   * @return {@link Outcome#OK}; {@link Outcome#NOT_STORED} when the key is absent there, and also, on stock memcached,
   *     when it had no memory for the longer value (it cannot tell the two apart); {@link Outcome#MEMORY_FULL}
   */
  public CompletableFuture<Outcome> appendOnAsync(ServerAddress server, String key, byte[] value) {
    return connection(server)
        .send(
            OutgoingRequest.store(
                "append", OutgoingRequest.checkKey(key), value, WriteOptions.DEFAULT))
        .thenApply(Outcome::of);
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
    return connection(server)
        .send(OutgoingRequest.deleteIfUnchanged(OutgoingRequest.checkKey(key), cas))
        .thenApply(Outcome::of);
  }

  /**
   * Raises the fence {@code name} to {@code epoch} on every server (Dendrite's server; the user must be a pin
   * user), as a new owner of a range does before it serves it.
   *
   * @return each server's fence epoch now: {@code epoch}, or a larger one another owner raised it to
   * @throws IqException when a server refuses or cannot be reached
   */
  public Map<ServerAddress, Long> raiseFence(String name, long epoch) {
    Map<ServerAddress, CompletableFuture<Reply>> sent = new LinkedHashMap<>();
    for (ServerAddress server : config.servers()) {
      sent.put(server, connection(server).send(OutgoingRequest.fence(name, epoch)));
    }
    Map<ServerAddress, Long> raised = new LinkedHashMap<>();
    sent.forEach(
        (server, reply) -> {
          Reply answer = ServerConnection.await(reply);
          String line =
              answer instanceof Reply.Status status ? status.line() : String.valueOf(answer);
          if (!line.startsWith("FENCED ")) {
            throw new IqException(server + " did not raise fence " + name + ": " + line);
          }
          raised.put(server, Long.parseUnsignedLong(line.substring("FENCED ".length()).trim()));
        });
    return raised;
  }

  /**
   * Guards every request the calling thread sends, until the scope is closed, by the fence {@code name} at {@code
   * epoch}: see {@link FenceScope}.
   */
  public FenceScope fenced(String name, long epoch) {
    return FenceScope.open(name, epoch);
  }

  /** Deletes a key on one given server only. */
  public Outcome deleteOn(ServerAddress server, String key) {
    return Outcome.of(
        connection(server).call(OutgoingRequest.delete(OutgoingRequest.checkKey(key))));
  }

  /** Reads a key from one given server, with its CAS unique (for {@link #casOn}). */
  public Optional<CacheValue> getOn(ServerAddress server, String key) {
    return ServerConnection.await(getOnAsync(server, key));
  }

  /** Async {@link #getOn}. */
  public CompletableFuture<Optional<CacheValue>> getOnAsync(ServerAddress server, String key) {
    return getFrom(connection(server), OutgoingRequest.checkKey(key));
  }

  /**
   * Whether {@code address} is down: a fresh request to it is refused or dropped. A server that does not answer in
   * time is <em>not</em> down (see {@link IqConnectionException#timedOut()}): it may still hold its values.
   */
  public boolean isDown(ServerAddress address) {
    try {
      ServerConnection.await(connection(address).send(OutgoingRequest.stats()));
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

  /** One {@code gets} per {@value #KEYS_PER_GET} keys to one server, all sent at once. */
  static List<CompletableFuture<Reply>> sendGets(ServerConnection server, List<String> keys) {
    List<CompletableFuture<Reply>> replies = new ArrayList<>();
    for (int from = 0; from < keys.size(); from += KEYS_PER_GET) {
      replies.add(
          server.send(
              OutgoingRequest.gets(
                  keys.subList(from, Math.min(keys.size(), from + KEYS_PER_GET)))));
    }
    return replies;
  }

  /** Adds the values a {@code gets} reply carries to {@code hits}, by key. */
  static void addHits(Reply reply, Map<String, CacheValue> hits) {
    for (Reply.Entry entry : entries(reply)) {
      if (entry instanceof Reply.Value value) {
        hits.put(value.key(), cacheValue(value.key(), value));
      }
    }
  }

  // ---------------------------------------------------------------- leases

  /**
   * Lease-aware read ({@code iqget}). On a miss the caller gets the key's I lease; on a hot miss
   * (somebody else holds it) the read is retried with the configured {@link Backoff} and gives
   * {@link ReadResult.Busy} if the deadline passes.
   */
  public ReadResult read(String key) {
    return leaseRead(key, null, config.backoff());
  }

  /**
   * Like {@link #read}, but one attempt: a hot miss gives {@link ReadResult.Busy} at once. For
   * callers that have something better to do than wait for another holder's fill.
   */
  public ReadResult tryRead(String key) {
    return leaseRead(key, null, Backoff.ONCE);
  }

  /** Starts a write transaction: Q leases whose records live under one tid on every server touched. */
  public Transaction beginTransaction() {
    return new Transaction(this, UUID.randomUUID().toString());
  }

  /** Starts a session: C/O leases whose records live under one sid on every server touched. */
  public Session beginSession() {
    return new Session(this, UUID.randomUUID().toString());
  }

  /** Closes all connections; outstanding requests fail. */
  @Override
  public void close() {
    connections.values().forEach(ServerConnection::close);
    background.close();
  }

  // ---------------------------------------------------------------- package internals

  ServerConnection connectionFor(String key) {
    return connections.get(ring.serverFor(OutgoingRequest.checkKey(key)));
  }

  ServerConnection connection(ServerAddress address) {
    ServerConnection connection = connections.get(address);
    if (connection == null) {
      throw new IllegalArgumentException(address + " is not one of this client's servers");
    }
    return connection;
  }

  Backoff backoff() {
    return config.backoff();
  }

  /** {@code iqget}, retried through hot misses. */
  ReadResult leaseRead(String key, String tid, Backoff backoff) {
    ServerConnection server = connectionFor(key);
    return backoff.retry(
        () -> {
          long epoch = server.epoch();
          Reply reply = server.call(OutgoingRequest.iqget(key, 0, tid));
          for (Reply.Entry entry : entries(reply)) {
            if (entry instanceof Reply.Value value) {
              return new ReadResult.Hit(cacheValue(key, value));
            }
            if (entry instanceof Reply.Lease lease) {
              return lease.refused()
                  ? new ReadResult.Busy(Duration.ZERO)
                  : new ReadResult.Leased(
                      new LeaseHandle(server, key, lease.token(), epoch, lease.pending()));
            }
          }
          return new ReadResult.NoValue();
        },
        ReadResult.Busy.class::isInstance,
        ReadResult.Busy::new);
  }

  static List<Reply.Entry> entries(Reply reply) {
    if (reply instanceof Reply.Entries entries) {
      return entries.entries();
    }
    throw new IqException("server answered: " + ((Reply.Status) reply).line());
  }

  static CacheValue cacheValue(String key, Reply.Value value) {
    return new CacheValue(key, value.data(), value.flags(), value.cas(), value.pending());
  }

  static CompletableFuture<Optional<CacheValue>> getFrom(ServerConnection server, String key) {
    return server
        .send(OutgoingRequest.gets(List.of(key)))
        .thenApply(
            reply ->
                entries(reply).stream()
                    .filter(Reply.Value.class::isInstance)
                    .map(Reply.Value.class::cast)
                    .findFirst()
                    .map(value -> cacheValue(key, value)));
  }

  private CompletableFuture<Outcome> store(
      String verb, String key, byte[] value, WriteOptions options) {
    return connectionFor(key)
        .send(OutgoingRequest.store(verb, key, value, options))
        .thenApply(Outcome::of);
  }

  /** Builds an {@link IqClient}; every setting has a sensible default except the server list. */
  public static final class Builder {
    private List<ServerAddress> servers = List.of();
    private int connectionsPerServer = 1;
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Duration requestTimeout = Duration.ofSeconds(5);
    private Backoff backoff = Backoff.DEFAULT;
    private int pointsPerServer = 160;
    private Login login = Login.NONE;
    private SSLContext tls;

    private Builder() {}

    /** The servers, as {@code host:port}. */
    public Builder servers(String... addresses) {
      return servers(Arrays.stream(addresses).map(ServerAddress::parse).toList());
    }

    /** The servers. */
    public Builder servers(List<ServerAddress> addresses) {
      this.servers = List.copyOf(addresses);
      return this;
    }

    /**
     * Pipelined connections per server (default 1). Each thread sends on one of them (threads spread evenly);
     * with one per thread that sends concurrently, no caller waits for another's reply to be read first.
     * Transactions use the first connection, so that their commands arrive in the order sent.
     */
    public Builder connectionsPerServer(int count) {
      this.connectionsPerServer = count;
      return this;
    }

    /** Limit on connecting (default 2 s). */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = timeout;
      return this;
    }

    /** Limit on any single reply (default 5 s). */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = timeout;
      return this;
    }

    /** Hot-miss retry policy (default {@link Backoff#DEFAULT}). */
    public Builder backoff(Backoff policy) {
      this.backoff = policy;
      return this;
    }

    /** Points per server on the hash ring (default 160, as ketama). */
    public Builder pointsPerServer(int points) {
      this.pointsPerServer = points;
      return this;
    }

    /**
     * Logs every connection in as {@code user} first: for servers started with {@code --auth-file}. A connection
     * whose login is refused fails with an {@link IqException} saying so.
     */
    public Builder login(String user, String password) {
      this.login = Login.of(user, password);
      return this;
    }

    /**
     * Connects through TLS with {@code context}, for servers started with {@code --tls-keystore}: the server's
     * certificate must be trusted by the context and name the host the client connects to (as HTTPS checks it);
     * otherwise no connection is made and requests fail with an {@link IqConnectionException}.
     */
    public Builder tls(SSLContext context) {
      this.tls = Objects.requireNonNull(context, "context");
      return this;
    }

    /** The configuration as set so far, validated. */
    public IqClientConfig config() {
      return new IqClientConfig(
          servers,
          connectionsPerServer,
          connectTimeout,
          requestTimeout,
          backoff,
          pointsPerServer,
          login,
          tls);
    }

    /** Opens the client. */
    public IqClient build() {
      return open(config());
    }
  }
}
