package io.dendrite.iq.server;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import javax.net.ssl.SSLContext;

/**
 * Everything an {@link IqServer} can be configured with. Immutable; build one with
 * {@link #builder()} or take {@link #defaults()}.
 *
 * @param port TCP port, {@code 0} for an ephemeral one (see {@link IqServer#port()})
 * @param listenAddress the address to bind; loopback unless told otherwise
 * @param leaseLifetime lifetime of every lease, transaction record and session record
 * @param memoryBytes budget for unpinned items (keys, values and per-item overhead)
 * @param pinnedMemoryBytes budget for pinned items, which are never evicted
 * @param maxItemSize the largest value accepted, in bytes
 * @param threads Netty worker threads
 * @param maxConnections connections beyond this are closed on accept
 * @param epoll serve through Linux's epoll where Netty's native transport loads (fewer syscalls and less CPU per
 *     request than the JDK selector); {@code false}, or where it does not load, through NIO
 * @param credentials who may talk to the server; {@link Credentials#none()} (the default) serves every connection
 * @param tls the TLS context connections are served with, or {@code null} (the default) for plain TCP
 * @param idleTimeout a connection that sends nothing for this long is closed, so idle sockets cannot hold every
 *     connection slot; {@link Duration#ZERO} keeps idle connections open (the default: Dendrite's clients keep
 *     theirs for the life of the process)
 * @param maxHeldPerConnection the most one connection may make the server hold apart from items: leases, staged
 *     values, tid and session records (default 64 MiB); past it a command that would add some is refused with {@code
 *     SERVER_ERROR}
 * @param maxHeldPerUser the same for all of one user's connections together, those closed included until what they
 *     left lapses (default 256 MiB); with no login, for all connections together
 * @param maxHeldTotal the same for every user together (default: {@code memoryBytes}), so that many users, each
 *     within its own bound, cannot together exhaust the server; every charge passes through it, tid and sid
 *     records with their names and keys, released tids and a scheduled {@code flush_all} included
 * @param pinUsers the users who may pin items and write, lease, touch, unpin or remove pinned ones (write-back's
 *     buffered writes) and write anything under {@code reservedPrefixes}; empty (the default) lets every user. Only
 *     with {@code credentials}
 * @param fenceUsers the users who may raise fences ({@code fence}); by default the pin users. Empty lets every
 *     user. Only with {@code credentials}
 * @param reservedPrefixes key prefixes that, with {@code pinUsers}, only the pin users may write, lease, touch or
 *     delete under (other users may read), and that another user's {@code flush_all} leaves: what write-back keeps
 *     in the cache tier, whose items a stranger must not create or drop ({@link #WRITE_BACK_PREFIXES}, the default)
 * @param preadyGate whether every lease reply says {@code <p>} = 1 ("a buffered write may exist") until a client
 *     sends {@code pready} (the default): a restart loses the pending markers, and a server that answered 0 for a
 *     key whose marker it lost would let a reader fill it from a data store that lacks the buffered write. {@code
 *     false} reports only the markers the server holds from the start, as IQ-Twemcached does
 * @param loginTimeout with {@code credentials}, a connection that has not logged in this long after it opened is
 *     closed (default 10 s), so that connections that never log in cannot hold slots or buffers for long
 * @param maxPendingLogins with {@code credentials}, the most connections that may wait to log in at once (default: a
 *     quarter of {@code maxConnections}, at least 1); past it, or when every connection slot is taken, the connection
 *     that has waited longest is closed to make room, so that connections that do not log in cannot lock out a
 *     client that does
 * @param lapseDropsValue whether a Q-refresh or Q-incremental lease that ends without its holder's {@code commit}
 *     (it lapses, or a raised fence voids it) takes its key's unpinned value with it, as a Q-invalidate lease always
 *     does (the default): its holder may have written the data store and died before the commit, and the value it
 *     quarantined would then be older than the data store. {@code false} keeps the value, as IQ-Twemcached does: only
 *     to show what that leaves stale ({@code KilledWriterIT})
 */
public record IqServerConfig(
    int port,
    String listenAddress,
    Duration leaseLifetime,
    long memoryBytes,
    long pinnedMemoryBytes,
    int maxItemSize,
    int threads,
    int maxConnections,
    boolean epoll,
    Duration idleTimeout,
    Credentials credentials,
    SSLContext tls,
    long maxHeldPerConnection,
    long maxHeldPerUser,
    long maxHeldTotal,
    Set<String> pinUsers,
    Set<String> fenceUsers,
    List<String> reservedPrefixes,
    boolean preadyGate,
    Duration loginTimeout,
    int maxPendingLogins,
    boolean lapseDropsValue) {

  /**
   * The key prefixes write-back and TARDIS keep their state under: buffered writes ({@code BW:}, {@code TW:}),
   * their listings ({@code PendingWrites:}), locks ({@code Lock:}), TARDIS's cached documents ({@code Doc:}),
   * sessions ({@code Session:}, {@code SessionMap:}, {@code SessionQueue:}), values moved aside ({@code
   * Undecodable:}), range write-back's log ({@code bl:}), the engines' and ranges' claim records ({@code
   * WriteBackEngines}, {@code Owner:}), fences ({@code Fence:}), and Dendrite's cached range results ({@code dd:},
   * which hits serve) and their log ({@code dl:}, from which an owner rebuilds PrInT); plus {@code ls:}, IQ-Twemcached's lease keys,
   * which a client written for it may read as a lease. A stranger's value under one of them would be applied to the
   * database as a buffered write, or break a lock or a claim.
   */
  public static final List<String> WRITE_BACK_PREFIXES =
      List.of(
          "BW:",
          "TW:",
          "PendingWrites:",
          "Lock:",
          "Doc:",
          "Session:",
          "SessionMap:",
          "SessionQueue:",
          "Undecodable:",
          "bl:",
          "WriteBackEngines",
          "Owner:",
          "Fence:",
          "dd:",
          "dl:",
          "ls:");

  public IqServerConfig {
    checkPort(port);
    checkListenAddress(listenAddress);
    checkLeaseLifetime(leaseLifetime);
    positive("memoryBytes", memoryBytes);
    notNegative("pinnedMemoryBytes", pinnedMemoryBytes);
    checkMaxItemSize(maxItemSize);
    positive("threads", threads);
    positive("maxConnections", maxConnections);
    checkIdleTimeout(idleTimeout);
    Objects.requireNonNull(credentials, "credentials");
    positive("maxHeldPerConnection", maxHeldPerConnection);
    positive("maxHeldPerUser", maxHeldPerUser);
    positive("maxHeldTotal", maxHeldTotal);
    checkLoginTimeout(loginTimeout);
    positive("maxPendingLogins", maxPendingLogins);
    pinUsers = Set.copyOf(pinUsers);
    requireLoggedIn("pin", pinUsers, credentials);
    fenceUsers = Set.copyOf(fenceUsers);
    requireLoggedIn("fence", fenceUsers, credentials);
    reservedPrefixes = List.copyOf(reservedPrefixes);
    for (String prefix : reservedPrefixes) {
      checkReservedPrefix(prefix);
    }
  }

  /**
   * The reserved prefix {@code key} starts with, or {@code null}; see {@link #reservedPrefixes()}. A handful of
   * prefixes: a scan costs less than any index.
   */
  public String reservedPrefixOf(String key) {
    for (String prefix : reservedPrefixes) {
      if (key.startsWith(prefix)) {
        return prefix;
      }
    }
    return null;
  }

  private static void requireLoggedIn(String role, Set<String> users, Credentials credentials) {
    for (String user : users) {
      require(
          credentials.lists(user),
          role
              + " user "
              + user
              + " is not in the credentials; "
              + role
              + " users need a login to tell them apart");
    }
  }

  private static void checkReservedPrefix(String prefix) {
    require(
        prefix != null && !prefix.isEmpty() && prefix.indexOf(' ') < 0,
        "a reserved prefix must be a non-empty key prefix without spaces, got '" + prefix + "'");
  }

  private static void checkIdleTimeout(Duration idleTimeout) {
    require(
        idleTimeout != null && !idleTimeout.isNegative(),
        "idleTimeout must be zero (off) or more, got " + idleTimeout);
  }

  private static void checkLoginTimeout(Duration loginTimeout) {
    require(
        loginTimeout != null && loginTimeout.toMillis() > 0,
        "loginTimeout must be at least 1 ms, got " + loginTimeout);
  }

  private static void positive(String name, long value) {
    require(value > 0, name + " must be positive, got " + value);
  }

  private static void notNegative(String name, long value) {
    require(value >= 0, name + " must not be negative, got " + value);
  }

  private static void checkPort(int port) {
    require(port >= 0 && port <= 65_535, "port must be in [0, 65535], got " + port);
  }

  private static void checkListenAddress(String listenAddress) {
    require(
        listenAddress != null && !listenAddress.isBlank(),
        "listenAddress is required, got " + listenAddress);
  }

  private static void checkLeaseLifetime(Duration leaseLifetime) {
    require(
        leaseLifetime != null && leaseLifetime.toMillis() > 0,
        "leaseLifetime must be at least 1 ms, got " + leaseLifetime);
  }

  private static void checkMaxItemSize(int maxItemSize) {
    require(
        maxItemSize > 0 && maxItemSize <= (1 << 30),
        "maxItemSize must be in (0, 1 GiB], got " + maxItemSize);
  }

  /** Port 11211 on 127.0.0.1, 10 s leases, 64 MiB data, 64 MiB pinned, 1 MiB items. */
  public static IqServerConfig defaults() {
    return builder().build();
  }

  /** A builder starting from the {@link #defaults()}. */
  public static Builder builder() {
    return new Builder();
  }

  private static void require(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }

  /** Mutable builder for {@link IqServerConfig}; each setter refuses a bad value, naming it. */
  public static final class Builder {
    private int port = 11211;
    private String listenAddress = "127.0.0.1";
    private Duration leaseLifetime = Duration.ofSeconds(10);
    private long memoryBytes = 64L << 20;
    private long pinnedMemoryBytes = 64L << 20;
    private int maxItemSize = 1 << 20;
    private boolean epoll = true;
    private int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
    private int maxConnections = 1024;
    private Duration idleTimeout = Duration.ZERO;
    private Credentials credentials = Credentials.none();
    private SSLContext tls;
    private long maxHeldPerConnection = 64L << 20;
    private long maxHeldPerUser = 256L << 20;
    private long maxHeldTotal; // 0: memoryBytes
    private Set<String> pinUsers = Set.of();
    private Set<String> fenceUsers;
    private List<String> reservedPrefixes = WRITE_BACK_PREFIXES;
    private boolean preadyGate = true;
    private Duration loginTimeout = Duration.ofSeconds(10);
    private int maxPendingLogins; // 0: a quarter of maxConnections
    private boolean lapseDropsValue = true;

    private Builder() {}

    /** See {@link IqServerConfig#lapseDropsValue()} (default true). */
    public Builder lapseDropsValue(boolean drops) {
      this.lapseDropsValue = drops;
      return this;
    }

    /** See {@link IqServerConfig#preadyGate()} (default true). */
    public Builder preadyGate(boolean gate) {
      this.preadyGate = gate;
      return this;
    }

    /** See {@link IqServerConfig#maxHeldPerConnection()}. */
    public Builder maxHeldPerConnection(long bytes) {
      positive("maxHeldPerConnection", bytes);
      this.maxHeldPerConnection = bytes;
      return this;
    }

    /** See {@link IqServerConfig#maxHeldPerUser()}. */
    public Builder maxHeldPerUser(long bytes) {
      positive("maxHeldPerUser", bytes);
      this.maxHeldPerUser = bytes;
      return this;
    }

    /** See {@link IqServerConfig#maxHeldTotal()} (default: {@link #memoryBytes}). */
    public Builder maxHeldTotal(long bytes) {
      positive("maxHeldTotal", bytes);
      this.maxHeldTotal = bytes;
      return this;
    }

    /** See {@link IqServerConfig#loginTimeout()} (default 10 s). */
    public Builder loginTimeout(Duration loginTimeout) {
      checkLoginTimeout(loginTimeout);
      this.loginTimeout = loginTimeout;
      return this;
    }

    /** See {@link IqServerConfig#maxPendingLogins()} (default: a quarter of {@link #maxConnections}, at least 1). */
    public Builder maxPendingLogins(int connections) {
      positive("maxPendingLogins", connections);
      this.maxPendingLogins = connections;
      return this;
    }

    /** See {@link IqServerConfig#pinUsers()}; checked against the credentials at {@link #build()}. */
    public Builder pinUsers(Set<String> users) {
      this.pinUsers = Set.copyOf(users);
      return this;
    }

    /** See {@link IqServerConfig#fenceUsers()}; the pin users unless set. Checked at {@link #build()}. */
    public Builder fenceUsers(Set<String> users) {
      this.fenceUsers = Set.copyOf(users);
      return this;
    }

    /** See {@link IqServerConfig#reservedPrefixes()} (default {@link #WRITE_BACK_PREFIXES}; empty reserves none). */
    public Builder reservedPrefixes(List<String> prefixes) {
      prefixes.forEach(IqServerConfig::checkReservedPrefix);
      this.reservedPrefixes = List.copyOf(prefixes);
      return this;
    }

    public Builder port(int port) {
      checkPort(port);
      this.port = port;
      return this;
    }

    public Builder listenAddress(String listenAddress) {
      checkListenAddress(listenAddress);
      this.listenAddress = listenAddress;
      return this;
    }

    /** How long every lease, transaction record and session record lives (default 10 s). */
    public Builder leaseLifetime(Duration leaseLifetime) {
      checkLeaseLifetime(leaseLifetime);
      this.leaseLifetime = leaseLifetime;
      return this;
    }

    public Builder memoryBytes(long memoryBytes) {
      positive("memoryBytes", memoryBytes);
      this.memoryBytes = memoryBytes;
      return this;
    }

    public Builder pinnedMemoryBytes(long pinnedMemoryBytes) {
      notNegative("pinnedMemoryBytes", pinnedMemoryBytes);
      this.pinnedMemoryBytes = pinnedMemoryBytes;
      return this;
    }

    public Builder maxItemSize(int maxItemSize) {
      checkMaxItemSize(maxItemSize);
      this.maxItemSize = maxItemSize;
      return this;
    }

    public Builder threads(int threads) {
      positive("threads", threads);
      this.threads = threads;
      return this;
    }

    public Builder maxConnections(int maxConnections) {
      positive("maxConnections", maxConnections);
      this.maxConnections = maxConnections;
      return this;
    }

    /** Whether to use epoll where it is available (default true); see {@link IqServerConfig#epoll()}. */
    public Builder epoll(boolean epoll) {
      this.epoll = epoll;
      return this;
    }

    /** How long a connection may send nothing before it is closed (default {@link Duration#ZERO}: never). */
    public Builder idleTimeout(Duration idleTimeout) {
      checkIdleTimeout(idleTimeout);
      this.idleTimeout = idleTimeout;
      return this;
    }

    /** Who may talk to the server (default {@link Credentials#none()}: every connection is served). */
    public Builder credentials(Credentials credentials) {
      this.credentials = Objects.requireNonNull(credentials, "credentials");
      return this;
    }

    /**
     * Serves every connection through TLS with {@code context} (its key manager holds the server's certificate and
     * key); {@code null} (the default) serves plain TCP.
     */
    public Builder tls(SSLContext context) {
      this.tls = context;
      return this;
    }

    public IqServerConfig build() {
      return new IqServerConfig(
          port,
          listenAddress,
          leaseLifetime,
          memoryBytes,
          pinnedMemoryBytes,
          maxItemSize,
          threads,
          maxConnections,
          epoll,
          idleTimeout,
          credentials,
          tls,
          maxHeldPerConnection,
          maxHeldPerUser,
          maxHeldTotal > 0 ? maxHeldTotal : memoryBytes,
          pinUsers,
          fenceUsers == null ? pinUsers : fenceUsers,
          reservedPrefixes,
          preadyGate,
          loginTimeout,
          maxPendingLogins > 0 ? maxPendingLogins : Math.max(1, maxConnections / 4),
          lapseDropsValue);
    }
  }
}
