package io.dendrite.coordination;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Range ownership across the processes of one service, on ZooKeeper through Apache Curator. Every process joins
 * with the same list of ranges; the live processes (ephemeral member nodes) share them evenly ({@link RangeSpread});
 * a range is owned by the process whose ephemeral owner node it holds, and moves when a process joins or leaves.
 * See {@code docs/coordination.md} for the argument.
 *
 * <ul>
 *   <li><b>One owner at a time.</b> A process takes a range only while the range has no owner node, and the owner
 *       removes its node only after {@link OwnershipListener#lost} returned (it stopped serving). Otherwise the node
 *       goes when the owner's session ends.
 *   <li><b>Epochs.</b> Taking a range bumps the range's epoch node in the same ZooKeeper transaction that creates
 *       the owner node, so each owner of a range has a larger epoch than every owner before it.
 *   <li><b>An owner stops before its session can end.</b> {@link #owns} is true only until a deadline that each
 *       answered heartbeat renews: the moment the heartbeat was sent plus 80% of the session timeout. ZooKeeper
 *       cannot have expired the session (and let another process take the range) before the server stopped hearing
 *       from this process for a whole session timeout. A process that was paused (a long GC, SIGSTOP) therefore
 *       finds its ownership lapsed when it resumes, before any request it serves; requests already past their check
 *       when the pause began are the one gap, which the cache tier's leases must close (see the document).
 * </ul>
 */
public final class ZooKeeperOwnership implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperOwnership.class);

  /** Of the session timeout, how long after a heartbeat was sent this process still counts as owner. */
  private static final double OWNERSHIP_SHARE_OF_SESSION = 0.8;

  private final CuratorFramework client;
  private final String root;
  private final String member;
  private final String endpoint;
  private final List<String> ranges;
  private final OwnershipListener listener;
  private final ScheduledExecutorService worker;

  /** {@code user:password} for ZooKeeper's digest scheme, or null: open ACLs. */
  private final byte[] credentials;

  /**
   * Heartbeats run on a thread of their own: a listener that takes long to rebuild a range it gained must not let
   * this process's other ownerships lapse meanwhile.
   */
  private final ScheduledExecutorService heartbeats;

  /** An owned range: its epoch, and the connection generation it was taken in. */
  private record Ownership(long epoch, long generation) {}

  private final Map<String, Ownership> owned = new ConcurrentHashMap<>();

  /**
   * Bumped the moment the session is in doubt (suspended or lost): ownerships taken in an earlier generation never
   * count again, whatever a later heartbeat renews, even before the worker has got round to giving them up.
   */
  private final AtomicLong generation = new AtomicLong();

  private final AtomicBoolean reconcileQueued = new AtomicBoolean();
  private final PersistentNode memberNode;
  private final CuratorCache cache;
  private volatile long ownershipValidUntilNanos;
  private volatile boolean closed;

  private ZooKeeperOwnership(Builder builder) {
    this.root = "/dendrite/" + builder.service;
    this.member = builder.member;
    this.endpoint = builder.endpoint;
    this.ranges = List.copyOf(builder.ranges);
    this.listener = builder.listener;
    this.worker = daemonThread("dendrite-coordinator-" + member);
    this.heartbeats = daemonThread("dendrite-coordinator-heartbeat-" + member);
    this.credentials = builder.credentials;
    CuratorFrameworkFactory.Builder settings =
        CuratorFrameworkFactory.builder()
            .connectString(builder.connectString)
            .sessionTimeoutMs(Math.toIntExact(builder.sessionTimeout.toMillis()))
            .connectionTimeoutMs(Math.toIntExact(builder.sessionTimeout.toMillis()))
            .retryPolicy(new ExponentialBackoffRetry(100, 5, 1_000));
    if (credentials != null) {
      settings.authorization("digest", credentials).aclProvider(new ServiceAcls(root));
    } else {
      LOG.warn(
          "{}: no ZooKeeper credentials: the nodes under {} get open ACLs, and anyone who reaches ZooKeeper"
              + " can change who owns which range; set ZooKeeperOwnership.Builder.credentials (in"
              + " ManyProcesses: zooKeeperCredentials)",
          member,
          root);
    }
    this.client = settings.build();
    client.getConnectionStateListenable().addListener((c, state) -> connectionChanged(state));
    client.start();
    try {
      if (!client.blockUntilConnected(
          Math.toIntExact(builder.sessionTimeout.toMillis()), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException(
            "could not reach ZooKeeper at "
                + builder.connectString
                + " within "
                + builder.sessionTimeout);
      }
      for (String range : ranges) {
        createIfAbsent(epochPath(range));
      }
      createIfAbsent(root + "/members");
      if (credentials != null) {
        restrictPersistentNodes();
      }
      memberNode =
          new PersistentNode(
              client,
              CreateMode.EPHEMERAL,
              false,
              memberPath(member),
              endpoint.getBytes(StandardCharsets.UTF_8));
      memberNode.start();
      if (!memberNode.waitForInitialCreate(
          builder.sessionTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("could not register member " + member + " in ZooKeeper");
      }
      cache = CuratorCache.build(client, root);
      cache
          .listenable()
          .addListener(
              CuratorCacheListener.builder()
                  .forAll((type, before, after) -> queueReconcile())
                  .build());
      cache.start();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      worker.shutdownNow();
      heartbeats.shutdownNow();
      client.close();
      throw new IllegalStateException("interrupted while joining", e);
    } catch (Exception e) {
      worker.shutdownNow();
      heartbeats.shutdownNow();
      client.close();
      if (e instanceof KeeperException.NoAuthException denied) {
        throw new IllegalStateException(
            "ZooKeeper refused "
                + member
                + " access to "
                + denied.getPath()
                + ": the service's nodes were made by processes with other ZooKeeper credentials"
                + " (or with some, and this process has none); give every process of the service the same"
                + " ZooKeeperOwnership.Builder.credentials (in ManyProcesses: zooKeeperCredentials)",
            e);
      }
      throw e instanceof RuntimeException runtime ? runtime : new IllegalStateException(e);
    }
    long beat = Math.max(50, builder.sessionTimeout.toMillis() / 5);
    heartbeats.scheduleWithFixedDelay(this::heartbeat, 0, beat, TimeUnit.MILLISECONDS);
    // At once: a process that just joined takes what is free without waiting a beat.
    worker.scheduleWithFixedDelay(this::reconcile, 0, beat, TimeUnit.MILLISECONDS);
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Whether this process owns {@code range} under {@code epoch} now: check it before serving each request of the
   * range. False once the ownership moved, or when this process has not heard from ZooKeeper for long enough that
   * its session may have ended.
   */
  public boolean owns(String range, long epoch) {
    Ownership current = owned.get(range);
    return current != null && current.epoch() == epoch && counts(current);
  }

  private boolean counts(Ownership ownership) {
    return ownership.generation() == generation.get()
        && System.nanoTime() - ownershipValidUntilNanos < 0;
  }

  /** The ranges this process owns now, with their epochs. */
  public Map<String, Long> owned() {
    Map<String, Long> now = new TreeMap<>();
    owned.forEach(
        (range, ownership) -> {
          if (counts(ownership)) {
            now.put(range, ownership.epoch());
          }
        });
    return now;
  }

  /**
   * Whether, as this process last saw ZooKeeper, every range has an owner and each is where the spread over the live
   * members puts it: no range is waiting for an owner or about to move.
   */
  public boolean settled() {
    List<String> members = members();
    if (members.isEmpty()) {
      return false;
    }
    Map<String, String> target = RangeSpread.of(members, ranges);
    return ranges.stream()
        .allMatch(
            range ->
                ownerOf(range)
                    .map(owner -> owner.member().equals(target.get(range)))
                    .orElse(false));
  }

  /** The live members of the service, as this process last saw ZooKeeper. */
  public List<String> members() {
    String prefix = root + "/members/";
    return cache.stream()
        .map(ChildData::getPath)
        .filter(path -> path.startsWith(prefix) && path.indexOf('/', prefix.length()) < 0)
        .map(path -> path.substring(prefix.length()))
        .sorted()
        .toList();
  }

  /** The owner of {@code range} as this process last saw it, or empty while the range has none. */
  public Optional<RangeOwner> ownerOf(String range) {
    return cache
        .get(ownerPath(range))
        .map(ChildData::getData)
        .map(OwnerNode::parse)
        .map(
            node ->
                new RangeOwner(
                    node.member(),
                    cache
                        .get(memberPath(node.member()))
                        .map(data -> new String(data.getData(), StandardCharsets.UTF_8))
                        .orElse(""),
                    node.epoch()));
  }

  /**
   * What a range's epoch node holds: the last owner's epoch, and {@code released} once that owner handed the range
   * over after it stopped serving it (not when its session ended).
   */
  private record EpochNode(long epoch, boolean released) {
    byte[] bytes() {
      return (epoch + (released ? " released" : "")).getBytes(StandardCharsets.UTF_8);
    }

    static EpochNode parse(byte[] data) {
      String text = data == null ? "" : new String(data, StandardCharsets.UTF_8).trim();
      boolean released = text.endsWith(" released");
      String number = released ? text.substring(0, text.length() - " released".length()) : text;
      return new EpochNode(number.isEmpty() ? 0 : Long.parseLong(number), released);
    }
  }

  /** What an owner node holds: {@code <member> <epoch>}. */
  private record OwnerNode(String member, long epoch) {
    byte[] bytes() {
      return (member + " " + epoch).getBytes(StandardCharsets.UTF_8);
    }

    static OwnerNode parse(byte[] data) {
      String text = new String(data, StandardCharsets.UTF_8);
      int space = text.lastIndexOf(' ');
      return new OwnerNode(text.substring(0, space), Long.parseLong(text.substring(space + 1)));
    }
  }

  /** This process's member id. */
  public String member() {
    return member;
  }

  /** Gives every owned range up (each {@link OwnershipListener#lost} first), then leaves the group. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    try {
      worker
          .submit(
              () -> {
                closed = true;
                List.copyOf(owned.keySet()).forEach(this::release);
              })
          .get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("{}: could not release every range before leaving: {}", member, e.toString());
    }
    worker.shutdownNow();
    heartbeats.shutdownNow();
    try {
      cache.close();
      memberNode.close();
    } catch (Exception e) {
      LOG.debug("{}: closing the member node: {}", member, e.toString());
    }
    client.close();
  }

  private void queueReconcile() {
    if (!closed && reconcileQueued.compareAndSet(false, true)) {
      worker.execute(
          () -> {
            reconcileQueued.set(false);
            reconcile();
          });
    }
  }

  /** Brings this process's ranges in line with the spread over the live members. Runs on {@link #worker}. */
  private void reconcile() {
    if (closed || !client.getZookeeperClient().isConnected()) {
      return;
    }
    // First, whatever a reconnection left from before: a periodic reconcile that was due can run
    // before the task the suspension queued, and must not take a range again over an ownership
    // nobody has stopped yet.
    stopServingEarlierGenerations("taken before the session was in doubt");
    try {
      List<String> members = client.getChildren().forPath(root + "/members");
      Map<String, String> target = RangeSpread.of(members, ranges);
      for (String range : ranges) {
        OwnerNode node = ownerNode(range);
        boolean mine = member.equals(target.get(range));
        Ownership held = owned.get(range);
        if (held != null && !new OwnerNode(member, held.epoch()).equals(node)) {
          // The node this ownership rests on is gone (or names another owner): another process may
          // own the range now, so this one must not serve it a moment longer.
          stopServing(range, held, "its owner node is gone or names another owner");
          held = null;
        }
        if (node != null && node.member().equals(member)) {
          if (held == null) {
            // Left from before a suspension: this process stopped serving it then. Taken again
            // below, under a new epoch, if it is still this process's.
            deleteLeftFromBefore(range, node.epoch());
          } else if (!mine) {
            release(range);
          }
        } else if (node == null && mine) {
          acquire(range);
        }
      }
    } catch (KeeperException.NoNodeException
        | KeeperException.NodeExistsException
        | KeeperException.BadVersionException race) {
      queueReconcile(); // another process moved first: look again
    } catch (Exception e) {
      LOG.debug("{}: reconcile stopped: {}", member, e.toString());
    }
  }

  /** The member named by {@code range}'s owner node, or null. */
  private String ownerMember(String range) throws Exception {
    OwnerNode node = ownerNode(range);
    return node == null ? null : node.member();
  }

  /** {@code range}'s owner node, or null. */
  private OwnerNode ownerNode(String range) throws Exception {
    try {
      return OwnerNode.parse(client.getData().forPath(ownerPath(range)));
    } catch (KeeperException.NoNodeException none) {
      return null;
    }
  }

  /**
   * Deletes this process's owner node of {@code range} from an ownership at {@code epoch} it no longer serves, only
   * if nobody took the range since: the epoch node still has that epoch as its version. Read and delete are two
   * requests; between them the node's session may end and another process take the range, and a plain delete would
   * then remove that owner's node, leaving it serving while a third process takes the range too.
   *
   * @throws KeeperException.BadVersionException when the range was taken since (nothing deleted)
   */
  private void deleteLeftFromBefore(String range, long epoch) throws Exception {
    client
        .transaction()
        .forOperations(
            client.transactionOp().check().withVersion((int) epoch).forPath(epochPath(range)),
            client.transactionOp().delete().forPath(ownerPath(range)));
  }

  /** Takes {@code range}: the epoch bump and the owner node in one transaction, then the listener. */
  private void acquire(String range) throws Exception {
    long takenIn = generation.get();
    Stat epochStat = new Stat();
    byte[] previous = client.getData().storingStatIn(epochStat).forPath(epochPath(range));
    long epoch = epochStat.getVersion() + 1L;
    // The version check below makes this the last word of the previous owner: it released, or it
    // did not.
    boolean handedOver = EpochNode.parse(previous).released();
    long sentAt = System.nanoTime();
    List<CuratorTransactionResult> results =
        client
            .transaction()
            .forOperations(
                client
                    .transactionOp()
                    .setData()
                    .withVersion(epochStat.getVersion())
                    .forPath(epochPath(range), new EpochNode(epoch, false).bytes()),
                client
                    .transactionOp()
                    .create()
                    .withMode(CreateMode.EPHEMERAL)
                    .forPath(ownerPath(range), new OwnerNode(member, epoch).bytes()));
    if (results.size() != 2) {
      return;
    }
    renewOwnership(sentAt);
    owned.put(range, new Ownership(epoch, takenIn));
    LOG.info("{}: owns {} (epoch {}, handed over: {})", member, range, epoch, handedOver);
    listener.gained(range, epoch, handedOver);
  }

  /** Stops serving {@code range} (the listener returns first), then removes the owner node. */
  private void release(String range) {
    Ownership ownership = owned.remove(range);
    if (ownership == null) {
      return;
    }
    long epoch = ownership.epoch();
    listener.lost(range, epoch);
    if (!client.getZookeeperClient().isConnected()) {
      return; // the node goes with the session; waiting for ZooKeeper here would hold up a close
    }
    try {
      if (member.equals(ownerMember(range))) {
        // One transaction: the owner node goes, and the epoch node says the range was handed over,
        // only if no other process has taken it since (the epoch node's version is still this
        // owner's epoch).
        client
            .transaction()
            .forOperations(
                client.transactionOp().delete().forPath(ownerPath(range)),
                client
                    .transactionOp()
                    .setData()
                    .withVersion((int) epoch)
                    .forPath(epochPath(range), new EpochNode(epoch, true).bytes()));
      }
      LOG.info("{}: released {} (epoch {})", member, range, epoch);
    } catch (Exception e) {
      // The node goes with the session if it cannot go now; nobody takes the range before.
      LOG.debug("{}: could not remove the owner node of {}: {}", member, range, e.toString());
    }
  }

  /** A round trip to ZooKeeper; answered, it renews this process's ownership deadline. */
  private void heartbeat() {
    if (closed) {
      return;
    }
    long sentAt = System.nanoTime();
    try {
      if (client.checkExists().forPath(memberPath(member)) != null) {
        renewOwnership(sentAt);
      }
    } catch (Exception e) {
      LOG.debug("{}: heartbeat failed: {}", member, e.toString());
    }
  }

  private synchronized void renewOwnership(long sentAtNanos) throws Exception {
    long sessionMillis = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
    long until =
        sentAtNanos
            + (long) (TimeUnit.MILLISECONDS.toNanos(sessionMillis) * OWNERSHIP_SHARE_OF_SESSION);
    if (until - ownershipValidUntilNanos > 0) {
      ownershipValidUntilNanos = until;
    }
  }

  /**
   * The session is in doubt (suspended) or over (lost): stop serving everything at once. The owner nodes stay (they
   * cannot be removed without a connection) and go with the session, or are cleared on reconnection.
   */
  private void connectionChanged(ConnectionState state) {
    if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
      generation.incrementAndGet();
      worker.execute(() -> stopServingEarlierGenerations("session " + state));
    } else if (state == ConnectionState.RECONNECTED) {
      queueReconcile();
    }
  }

  /**
   * Gives up, listener first, every ownership taken in an earlier connection generation than now. Runs on {@link
   * #worker}.
   */
  private void stopServingEarlierGenerations(String why) {
    long current = generation.get();
    for (String range : new ArrayList<>(owned.keySet())) {
      Ownership ownership = owned.get(range);
      if (ownership != null && ownership.generation() != current) {
        stopServing(range, ownership, why);
      }
    }
  }

  /** Gives {@code ownership} of {@code range} up here, listener first, without touching ZooKeeper's nodes. */
  private void stopServing(String range, Ownership ownership, String why) {
    if (owned.remove(range, ownership)) {
      LOG.info("{}: stopped serving {} (epoch {}): {}", member, range, ownership.epoch(), why);
      listener.lost(range, ownership.epoch());
    }
  }

  private static ScheduledExecutorService daemonThread(String name) {
    return Executors.newSingleThreadScheduledExecutor(
        runnable -> {
          Thread thread = new Thread(runnable, name);
          thread.setDaemon(true);
          return thread;
        });
  }

  private void createIfAbsent(String path) throws Exception {
    try {
      client.create().creatingParentsIfNeeded().forPath(path, "0".getBytes(StandardCharsets.UTF_8));
    } catch (KeeperException.NodeExistsException exists) {
      // another process made it
    }
  }

  /**
   * Gives the service's persistent nodes the service's ACL, should they have been made before with another (by an
   * earlier run without credentials): a node that keeps an open ACL lets anyone delete or add the nodes below it.
   */
  private void restrictPersistentNodes() throws Exception {
    List<String> paths = new ArrayList<>(List.of(root, root + "/members", root + "/ranges"));
    for (String range : ranges) {
      paths.add(root + "/ranges/" + range);
      paths.add(epochPath(range));
    }
    for (String path : paths) {
      List<ACL> now = client.getACL().forPath(path);
      if (now.stream().anyMatch(acl -> acl.getId().equals(ZooDefs.Ids.ANYONE_ID_UNSAFE))) {
        client.setACL().withACL(ZooDefs.Ids.CREATOR_ALL_ACL).forPath(path);
        LOG.info("{}: restricted the ACL of {} (was {})", member, path, now);
      }
    }
  }

  /**
   * The service's ACLs: its nodes, from {@code /dendrite/<service>} down, belong to whoever logs in with the service's
   * credentials, and nobody else may read or change them; the nodes above it (shared by every service) may be read
   * and given children by anyone, and changed or deleted by nobody but their creator.
   */
  private record ServiceAcls(String root) implements ACLProvider {
    // Arrays.asList, not List.of: ZooKeeper checks an ACL list with contains(null), which List.of
    // refuses with a NullPointerException (a fresh ensemble, where this parent is created, failed).
    private static final List<ACL> SHARED_PARENT =
        java.util.Collections.unmodifiableList(
            java.util.Arrays.asList(
                new ACL(ZooDefs.Perms.ALL, ZooDefs.Ids.AUTH_IDS),
                new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE)));

    @Override
    public List<ACL> getDefaultAcl() {
      return ZooDefs.Ids.CREATOR_ALL_ACL;
    }

    @Override
    public List<ACL> getAclForPath(String path) {
      return path.equals(root) || path.startsWith(root + "/")
          ? ZooDefs.Ids.CREATOR_ALL_ACL
          : SHARED_PARENT;
    }
  }

  private String memberPath(String id) {
    return root + "/members/" + id;
  }

  private String epochPath(String range) {
    return root + "/ranges/" + range + "/epoch";
  }

  private String ownerPath(String range) {
    return root + "/ranges/" + range + "/owner";
  }

  /** Settings of a {@link ZooKeeperOwnership}; every one but the session timeout is required. */
  public static final class Builder {
    private String connectString;
    private String service;
    private String member;
    private String endpoint = "";
    private Duration sessionTimeout = Duration.ofSeconds(10);
    private List<String> ranges;
    private OwnershipListener listener;
    private byte[] credentials;

    private Builder() {}

    /**
     * ZooKeeper credentials (the digest scheme), the same for every process of the service: its nodes are then made
     * readable and writable only by processes that log in with them ({@code CREATOR_ALL_ACL}), so a client without
     * them can neither join, nor take, delete or rewrite an ownership. Without them (the default) the nodes have open
     * ACLs and a warning is logged at start. The password travels to ZooKeeper as plain as the connection is: use
     * ZooKeeper's client TLS where the network is not trusted.
     *
     * @throws IllegalArgumentException when the user is empty or holds a colon, or the password is empty
     */
    public Builder credentials(String user, String password) {
      Objects.requireNonNull(user, "user");
      Objects.requireNonNull(password, "password");
      if (user.isEmpty() || user.contains(":") || password.isEmpty()) {
        throw new IllegalArgumentException(
            "ZooKeeper credentials need a user without colons and a password, got user \""
                + user
                + "\"");
      }
      this.credentials = (user + ":" + password).getBytes(StandardCharsets.UTF_8);
      return this;
    }

    /** ZooKeeper's servers, {@code host:port[,host:port...]}. */
    public Builder connectString(String connectString) {
      this.connectString = requireText("connectString", connectString);
      return this;
    }

    /** The service whose processes share the ranges: one group per service. */
    public Builder service(String service) {
      this.service = requireName("service", service);
      return this;
    }

    /** This process's id, unique among the service's live processes. */
    public Builder member(String member) {
      this.member = requireName("member", member);
      return this;
    }

    /** Where this process takes forwarded requests, as other processes will connect to it. */
    public Builder endpoint(String endpoint) {
      this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
      return this;
    }

    /**
     * The ZooKeeper session timeout (default 10 s): how long after a process was last heard from its ranges move.
     */
    public Builder sessionTimeout(Duration sessionTimeout) {
      if (sessionTimeout == null || sessionTimeout.toMillis() < 100) {
        throw new IllegalArgumentException(
            "sessionTimeout must be at least 100 ms, got " + sessionTimeout);
      }
      this.sessionTimeout = sessionTimeout;
      return this;
    }

    /** The ranges to share; every process of the service must give the same ones. */
    public Builder ranges(List<String> ranges) {
      if (ranges == null || ranges.isEmpty()) {
        throw new IllegalArgumentException("ranges must name at least one range");
      }
      ranges.forEach(range -> requireName("range", range));
      this.ranges = List.copyOf(ranges);
      return this;
    }

    public Builder listener(OwnershipListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** Connects, joins and starts taking this process's share of the ranges. */
    public ZooKeeperOwnership start() {
      requireText("connectString", connectString);
      requireName("service", service);
      requireName("member", member);
      Objects.requireNonNull(ranges, "ranges");
      Objects.requireNonNull(listener, "listener");
      return new ZooKeeperOwnership(this);
    }

    private static String requireText(String name, String value) {
      if (value == null || value.isBlank()) {
        throw new IllegalArgumentException(name + " is required");
      }
      return value;
    }

    /** A name that is one ZooKeeper path element. */
    private static String requireName(String name, String value) {
      requireText(name, value);
      if (value.contains("/") || value.equals(".") || value.equals("..") || value.contains(" ")) {
        throw new IllegalArgumentException(
            name + " must be one path element without spaces, got \"" + value + "\"");
      }
      return value;
    }
  }
}
