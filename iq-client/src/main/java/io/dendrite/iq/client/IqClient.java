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
 * <p>The client itself does what an ordinary cache user needs: commands on keys, which it sends to each key's server
 * on the ring. What only some callers need comes from one object per job, each documented for its users: {@link
 * #servers()} (commands to one given server, for code that keeps its own copies), {@link #replicaPlacement()} (where
 * replicated keys live, for write-back), {@link #fences()} (for the owners of ranges), {@link #pendingMarkers()}
 * (for TARDIS) and {@link #threadCounters()} (for benchmarks).
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
  private final ReplicaPlacement replicaPlacement;
  private final ServerCommands servers = new ServerCommands(this);
  private final Fences fences = new Fences(this);
  private final PendingMarkers pendingMarkers = new PendingMarkers(this);
  private final ThreadCounters threadCounters = new ThreadCounters();

  /** Servers that answered {@code mappend} with {@code ERROR}: {@link #appendAll} appends one value at a time. */
  private final Set<ServerAddress> withoutMultiAppend = ConcurrentHashMap.newKeySet();

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
              threadCounters.ofThread));
    }
    this.ring = new HashRing(config.servers(), config.pointsPerServer());
    this.replicaPlacement = new ReplicaPlacement(this, ring);
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

  /** Commands sent to one given server rather than to a key's: for code that keeps copies where it chose. */
  public ServerCommands servers() {
    return servers;
  }

  /** Where replicated keys live on this client's servers, and the changes of it that a lost server calls for. */
  public ReplicaPlacement replicaPlacement() {
    return replicaPlacement;
  }

  /** The fences of this client's servers: for the owner of a range. */
  public Fences fences() {
    return fences;
  }

  /** The pending markers of this client's servers: for TARDIS's Contextual recovery. */
  public PendingMarkers pendingMarkers() {
    return pendingMarkers;
  }

  /** What the calling thread has sent through this client: for measuring what an operation costs. */
  public ThreadCounters threadCounters() {
    return threadCounters;
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
