package io.dendrite.coordination;

import io.dendrite.core.Dendrite;
import io.dendrite.core.StoreFence;
import io.dendrite.core.WriteCommand;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * A {@link Dendrite.Deployment} over the processes of a service: the domain is split into ranges, ZooKeeper gives
 * each range one owner at a time, and the other processes forward the range's misses and writes to its owner. Every
 * process of the service builds its Dendrite with the same settings and the same deployment; a process may join or
 * leave at any time, and a process that dies loses its ranges when its ZooKeeper session ends.
 *
 * <pre>{@code
 * Dendrite<Integer, Score> scores = Dendrite.builder(DomainType.INTEGER, rows)
 *     .collection("scores").domain("id").range(0, 59_999).cache(cache)
 *     .query("byId", ...).command("set", ...)
 *     .deployment(ManyProcesses.overZooKeeper("zk1:2181,zk2:2181", "scores-service")
 *         .forwardingSecurity(ForwardingSecurity.sharedSecret(secretFile)))
 *     .build();                                      // joins; ranges arrive as they are spread
 * }</pre>
 *
 * <p>The Dendrite's range ({@link Dendrite.Builder#range}) is required: it is the domain the ranges split. Each
 * range's {@link io.dendrite.core.RangeCache} gets the builder's other settings (write policy, β, leases, near
 * cache). Write-back takes the buffers this deployment makes per range ({@link #writeBack}), not one process's buffer.
 */
public final class ManyProcesses implements Dendrite.Deployment {
  private final String connectString;
  private final String service;
  private String member;
  private Duration sessionTimeout;
  private String host;
  private Integer port;
  private ForwardingSecurity forwardingSecurity;
  private String zooKeeperUser;
  private String zooKeeperPassword;
  private Integer forwardingThreads;
  private Duration requestTimeout;
  private Integer ranges;
  private StoreFence storeFence;
  private PartitionedDendrite.WriteBuffers<?, ?> writeBuffers;
  private OwnershipListener ownershipListener;

  private ManyProcesses(String connectString, String service) {
    this.connectString = Objects.requireNonNull(connectString, "connectString");
    this.service = Objects.requireNonNull(service, "service");
  }

  /**
   * The processes of the service {@code service}, which meet in the ZooKeeper ensemble at {@code connectString}:
   * every process of the service names the same ones.
   */
  public static ManyProcesses overZooKeeper(String connectString, String service) {
    return new ManyProcesses(connectString, service);
  }

  /** How many ranges the domain is split into (default 16): the units that move between processes. */
  public ManyProcesses ranges(int count) {
    if (count < 1) {
      throw new IllegalArgumentException("ranges must be at least 1, got " + count);
    }
    this.ranges = count;
    return this;
  }

  /** This process's name in the service (default: its pid and a random number); unique among live processes. */
  public ManyProcesses member(String member) {
    this.member = Objects.requireNonNull(member, "member");
    return this;
  }

  /**
   * The ZooKeeper session timeout (default 10 s): how long a process that stopped answering keeps its ranges, and so
   * how long its ranges wait for a new owner.
   */
  public ManyProcesses sessionTimeout(Duration timeout) {
    this.sessionTimeout = Objects.requireNonNull(timeout, "timeout");
    return this;
  }

  /** Where this process takes forwarded requests (default 127.0.0.1 on a free port); others connect there. */
  public ManyProcesses listen(String host, int port) {
    this.host = Objects.requireNonNull(host, "host");
    this.port = port;
    return this;
  }

  /**
   * Who may send this process forwarded requests, and whether they travel through TLS; the same in every process of
   * the service. Required: {@link ForwardingSecurity#sharedSecret} (each connection proves the secret before any
   * request runs), or {@link ForwardingSecurity#unauthenticatedOnLoopback} when every process runs on one machine and
   * {@link #listen} stays on a loopback address. Anyone who can send requests to the port runs the bound queries and
   * writes as the owner.
   */
  public ManyProcesses forwardingSecurity(ForwardingSecurity security) {
    this.forwardingSecurity = Objects.requireNonNull(security, "security");
    return this;
  }

  /**
   * ZooKeeper credentials (digest scheme), the same in every process of the service: the service's membership and
   * ownership nodes are then readable and writable only with them. Without them (the default) the nodes have open
   * ACLs, anyone who reaches ZooKeeper can change who owns which range, and a warning is logged at start.
   */
  public ManyProcesses zooKeeperCredentials(String user, String password) {
    ZooKeeperOwnership.builder().credentials(user, password); // checks them now
    this.zooKeeperUser = user;
    this.zooKeeperPassword = password;
    return this;
  }

  /** How many forwarded requests run at once here (default 8). */
  public ManyProcesses forwardingThreads(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("forwardingThreads must be at least 1, got " + threads);
    }
    this.forwardingThreads = threads;
    return this;
  }

  /** How long a get's part or a write looks for its range's owner and waits for its answer (default 10 s). */
  public ManyProcesses requestTimeout(Duration timeout) {
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("requestTimeout must be positive, got " + timeout);
    }
    this.requestTimeout = timeout;
    return this;
  }

  /**
   * The ranges' fences in the data store: a process that takes a range over raises the range's fence there to its
   * epoch before it serves the range, and a write command's statement carries the owner's {@link
   * io.dendrite.core.FenceToken}, so a former owner's statement that reaches the data store after the takeover is
   * refused instead of applied (the write is then sent to the new owner). Only commands that fence their statements
   * are covered: {@link io.dendrite.core.SqlWriteCommand} over the same {@link io.dendrite.core.SqlFence}; write-back
   * engines owned by the range over {@code MySqlStore} or {@code MongoStore} (give the store here). Default: none
   * ({@code docs/coordination.md} says what that leaves open).
   */
  public ManyProcesses storeFence(StoreFence fence) {
    this.storeFence = Objects.requireNonNull(fence, "fence");
    return this;
  }

  /**
   * Write-back: each range's writes are buffered in the buffer {@code buffers} makes for it when this process takes
   * the range over, and every command bound on the Dendrite must be a change those buffers hold. A new owner whose
   * predecessor did not hand the range over applies the range's buffered writes before it serves the range. Each
   * range's buffer should have a write-back engine of its own, owned by the range ({@code
   * DocumentWriteBack.Builder#ownedRange(OwnedRange)}).
   */
  public <K extends Comparable<? super K>, C> ManyProcesses writeBack(
      PartitionedDendrite.WriteBuffers<K, C> buffers) {
    this.writeBuffers = Objects.requireNonNull(buffers, "buffers");
    return this;
  }

  /**
   * Told whenever this process starts serving a range ({@link OwnershipListener#gained(String, long, boolean)}: handed
   * over by its previous owner, or taken over from one that stopped without doing so) and stops serving one ({@link
   * OwnershipListener#lost}), after the fact. It runs on the coordinator's thread, which waits for it: keep it short.
   * A listener that throws is logged and changes nothing. The counts are also in {@link PartitionedDendrite#metrics}
   * and, with Micrometer, {@link PartitionedMeters}.
   */
  public ManyProcesses ownershipListener(OwnershipListener listener) {
    this.ownershipListener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  @Override
  public <K extends Comparable<? super K>, R> Dendrite<K, R> deploy(
      Dendrite.Settings<K, R> settings) {
    if (settings.min() == null) {
      throw new IllegalStateException(
          "range(min, max) is required with ManyProcesses: it is the domain the ranges split");
    }
    PartitionedDendrite.Builder<K, R> builder =
        PartitionedDendrite.builder(settings.type(), settings.rows())
            .collection(settings.collection())
            .domain(settings.domain())
            .range(settings.min(), settings.max())
            .cache(settings.cache())
            .dendrite(ignored -> settings.rangeCache().get())
            .zooKeeper(connectString, service);
    settings.queries().forEach(builder::query);
    if (writeBuffers == null) {
      settings.commands().forEach(builder::command);
    } else {
      builder.writeBack(buffers(), commands(settings.commands()));
    }
    if (ranges != null) {
      builder.ranges(ranges);
    }
    if (member != null) {
      builder.member(member);
    }
    if (sessionTimeout != null) {
      builder.sessionTimeout(sessionTimeout);
    }
    if (host != null) {
      builder.listen(host, port);
    }
    if (forwardingSecurity != null) {
      builder.forwardingSecurity(forwardingSecurity);
    }
    if (zooKeeperUser != null) {
      builder.zooKeeperCredentials(zooKeeperUser, zooKeeperPassword);
    }
    if (forwardingThreads != null) {
      builder.forwardingThreads(forwardingThreads);
    }
    if (requestTimeout != null) {
      builder.requestTimeout(requestTimeout);
    }
    if (storeFence != null) {
      builder.storeFence(storeFence);
    }
    if (ownershipListener != null) {
      builder.ownershipListener(ownershipListener);
    }
    return builder.build();
  }

  /** The buffers, typed as the commands' changes: the buffers check each command's change when they hold it. */
  @SuppressWarnings("unchecked")
  private <K extends Comparable<? super K>> PartitionedDendrite.WriteBuffers<K, Object> buffers() {
    return (PartitionedDendrite.WriteBuffers<K, Object>) writeBuffers;
  }

  @SuppressWarnings("unchecked")
  private static <K extends Comparable<? super K>, R>
      Map<String, WriteCommand<K, R, Object>> commands(Map<String, WriteCommand<K, R, ?>> bound) {
    return (Map<String, WriteCommand<K, R, Object>>) (Map<String, ?>) bound;
  }
}
