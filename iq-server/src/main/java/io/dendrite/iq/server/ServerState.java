package io.dendrite.iq.server;

import io.dendrite.iq.protocol.MalformedRequestException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Everything the commands share: the item store, the lease, transaction and session tables, the
 * pending markers, locks, tokens, stats and the clock. Shared helpers that more than one command
 * family needs live here; each family's rules live in its own commands class.
 */
final class ServerState {

  /** Memcached treats relative expiry times beyond 30 days as absolute Unix times. */
  private static final long MAX_RELATIVE_EXPTIME_SECONDS = 60L * 60 * 24 * 30;

  final IqServerConfig config;
  final LongSupplier clock;
  final ServerStats stats = new ServerStats();
  final KeyLocks locks = new KeyLocks();
  final TokenSource tokens = new TokenSource();
  final ItemStore items;
  final SessionTable sessions;
  final LeaseTable leases;
  final TransactionTable transactions = new TransactionTable();
  final Clients clients;
  final Fences fences = new Fences();
  final PendingLogins pendingLogins;

  /**
   * Keys with TARDIS's pending marker ({@code pd:} in IQ-Twemcached): set by {@code pmark} and {@code commit <tid>
   * 1}, cleared by {@code commit <tid> 0} and {@code iqset}, reported as {@code <p>}.
   */
  final PendingMarkers pendingMarkers;

  final long startedAtMillis;

  /**
   * Random per start, reported by {@code stats} as {@code run_id}: a client that sees it change knows the server
   * restarted, empty of what it held, even when the restart reused the address and fell within one second.
   */
  final String runId = Long.toHexString(new java.security.SecureRandom().nextLong());

  /**
   * Set while the process hands over before it stops ({@link IqServer#leave}): reported by {@code stats} as {@code
   * leaving 1}, and no new Q lease is granted on a pinned item, so that clients take the server out of replica
   * placement and copy what it holds to the next servers.
   */
  volatile boolean leaving;

  /** The connections a leaving server waits for ({@code pmoved}); see {@link Handover}. */
  final Handover handover = new Handover();

  private final ScheduledExecutorService scheduler;

  /** The one delayed flush this server keeps, as memcached keeps one flush time; guarded by {@code this}. */
  private ScheduledFuture<?> pendingFlush;

  private HeldBytes.Charge pendingFlushCharge;

  /** Counts flushes, so that a delayed one that began to run as it was replaced does nothing. */
  private long flushes;

  ServerState(IqServerConfig config, LongSupplier clock, ScheduledExecutorService scheduler) {
    this.config = config;
    this.clock = clock;
    this.scheduler = scheduler;
    // --pinned-memory: one budget for pinned items and pending markers
    PinnedQuota pinnedQuota = new PinnedQuota(config.pinnedMemoryBytes());
    this.items = new ItemStore(config.memoryBytes(), pinnedQuota, clock);
    this.pendingMarkers = new PendingMarkers(pinnedQuota, !config.preadyGate());
    this.sessions = new SessionTable(clock, config.leaseLifetime().toMillis(), stats);
    this.leases = new LeaseTable(sessions::isLive, stats);
    this.clients = new Clients(config);
    this.pendingLogins = new PendingLogins(config.maxPendingLogins(), stats);
    this.startedAtMillis = clock.getAsLong();
  }

  long now() {
    return clock.getAsLong();
  }

  /** When a lease granted now lapses. */
  long leaseExpiry() {
    return now() + config.leaseLifetime().toMillis();
  }

  /**
   * Converts a memcached exptime to a wall-clock expiry ({@code 0} = never): seconds from now up to 30 days, a Unix
   * time beyond. A Unix time too far ahead to count in milliseconds is {@link Long#MAX_VALUE}, which no clock
   * reaches, rather than an overflow into the past.
   */
  long expiryOf(long exptime) {
    if (exptime == 0) {
      return 0;
    }
    if (exptime < 0) {
      return 1;
    }
    if (exptime <= MAX_RELATIVE_EXPTIME_SECONDS) {
      return now() + exptime * 1000;
    }
    return exptime > Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : exptime * 1000;
  }

  /**
   * Voids every lease on {@code key}: the IQ lease (and its staged value) and the C/O holders,
   * whose sessions are aborted because what they read or staged is no longer current. Caller
   * holds the key's stripe.
   */
  void voidLeases(String key) {
    KeyLease lease = leases.find(key, now());
    if (lease == null) {
      return;
    }
    if (lease.kind != KeyLease.Kind.NONE) {
      lease.clearIq();
      stats.leasesVoided.increment();
    }
    lease.readers.forEach(sessions::abort);
    lease.readers.clear();
    if (lease.owner != null) {
      sessions.abort(lease.owner);
      lease.clearOwner();
    }
    leases.removeIfEmpty(key, lease);
  }

  /**
   * Makes room for a writer's exclusive or quarantine lease: every C reader other than
   * {@code exceptSid} is aborted, because what it read is about to change (the writer wins).
   */
  void abortReaders(KeyLease lease, String exceptSid) {
    lease.readers.removeIf(
        sid -> {
          if (sid.equals(exceptSid)) {
            return false;
          }
          sessions.abort(sid);
          return true;
        });
  }

  /**
   * Makes {@code key}'s value expire when {@code lease}, a Q-ref or Q-inc lease just granted, lapses, as {@code qareg}
   * does for a Q-inv lease: the holder may write the data store and die (or lose its connection) before its {@code
   * commit}, and the value it quarantined is then older than the data store; gone, the next reader misses and reads
   * the data store. A {@code commit} stores the staged value with the value's own expiry (the staged copy carries
   * it); {@code release} and {@code unlease} give it back ({@link #endQuarantine}). Pinned values stay as they are:
   * they are data the cache tier alone may hold (write-back's buffered writes), not copies of the data store. Off with
   * {@link IqServerConfig#lapseDropsValue()} false. Caller holds the key's stripe.
   */
  void quarantineValue(String key, KeyLease lease) {
    if (!config.lapseDropsValue()) {
      return;
    }
    Item item = items.get(key);
    if (item == null
        || item.pinned()
        || (item.expiresAtMillis() != 0 && item.expiresAtMillis() <= lease.expiresAtMillis)) {
      return;
    }
    items.put(key, item.withExpiry(lease.expiresAtMillis));
    Item quarantined = items.get(key);
    if (quarantined == null) {
      // Evicted as it was stored again (Caffeine may pick any unpinned item, the one just written
      // too): nothing is
      // left to quarantine, and the next reader misses, which is what the quarantine was for.
      return;
    }
    lease.quarantinedCas = quarantined.cas();
    lease.quarantinedValueExpiry = item.expiresAtMillis();
  }

  /**
   * {@code lease}, a Q-ref or Q-inc lease, ends without changing {@code key}'s value ({@code release}, {@code
   * unlease}, before {@code sar}): the value {@link #quarantineValue} made expire with the lease, if it is still
   * there, gets its own expiry back. Caller holds the key's stripe.
   */
  void endQuarantine(String key, KeyLease lease) {
    if (lease.quarantinedCas == 0) {
      return;
    }
    Item item = items.get(key);
    if (item != null && item.cas() == lease.quarantinedCas) {
      items.put(key, item.withExpiry(lease.quarantinedValueExpiry));
    }
    lease.quarantinedCas = 0;
  }

  /**
   * Voids every IQ-family lease granted under fence {@code name} at an epoch below {@code epoch}, as if it had
   * lapsed now: its holder, an owner the fence has just shut out, could only be refused when it used it, and until
   * then it would keep others waiting for the lease's lifetime (a killed owner's Q leases did, after a takeover). A
   * Q lease takes its key's value with it, as its lapse would (a Q-ref or Q-inc lease unless {@link
   * IqServerConfig#lapseDropsValue()} is false: it then only drops what it staged).
   *
   * @return how many were voided
   */
  int voidLeasesFencedOut(String name, long epoch) {
    int voided = 0;
    long now = now();
    for (String key : leases.keys()) {
      try (KeyLocks.Held held = locks.lock(key)) {
        KeyLease lease = leases.find(key, now);
        if (lease == null
            || lease.grantedUnder == null
            || !lease.grantedUnder.name().equals(name)
            || lease.grantedUnder.epoch() >= epoch) {
          continue;
        }
        Item item = items.get(key);
        boolean expiresWithLease =
            item != null
                && (lease.kind == KeyLease.Kind.Q_INV
                    ? item.expiresAtMillis() != 0 && item.expiresAtMillis() <= lease.expiresAtMillis
                    : lease.quarantinedCas != 0 && item.cas() == lease.quarantinedCas);
        if (expiresWithLease) {
          items.remove(
              key); // made to expire with the lease (qareg, quarantineValue): it goes now, with it
        }
        lease.clearIq();
        leases.removeIfEmpty(key, lease);
        stats.leasesVoided.increment();
        voided++;
      }
    }
    return voided;
  }

  /** Voids an I lease so that a fill racing a writer cannot store a stale value. */
  void voidInhibit(KeyLease lease) {
    if (lease.kind == KeyLease.Kind.I) {
      lease.clearIq();
      stats.leasesVoided.increment();
    }
  }

  /**
   * Refuses a change to {@code key} that {@code client} may not make. Pinned items are write-back's buffered writes,
   * which the cache tier alone holds: with {@code --pin-users}, only those users may pin an item ({@code pinning})
   * or write, lease, touch, unpin or remove a pinned one; others may read it. The same goes for every key under a
   * reserved prefix ({@code --reserved-prefixes}), pinned or not, present or not: a stranger's value there would be
   * taken for a buffered write, a lock or a claim. Caller holds the key's stripe, so the item cannot become pinned
   * between this check and the change.
   *
   * @throws NotPermittedException when the change is not the client's to make
   */
  void requireMayChange(Client client, String key, boolean pinning) {
    if (client.mayChangePinned()) {
      return;
    }
    String reserved = config.reservedPrefixOf(key);
    if (reserved != null) {
      throw new NotPermittedException(
          "user "
              + client.user()
              + " may not change reserved key "
              + key
              + " (prefix "
              + reserved
              + " is reserved for the pin users)");
    }
    if (pinning) {
      requireMayPin(client);
    }
    if (!mayChange(client, key)) {
      throw new NotPermittedException(
          "user " + client.user() + " may not change pinned item " + key);
    }
  }

  /**
   * Refuses what would take pinned memory, a pinned item or a pending marker, to a client that may not pin ({@code
   * --pin-users}).
   *
   * @throws NotPermittedException when the client may not
   */
  void requireMayPin(Client client) {
    if (!client.mayChangePinned()) {
      throw new NotPermittedException("user " + client.user() + " may not pin items");
    }
  }

  /**
   * Whether {@code client} may change {@code key}'s current item (see {@link #requireMayChange}); caller holds the
   * key's stripe.
   */
  boolean mayChange(Client client, String key) {
    if (client.mayChangePinned()) {
      return true;
    }
    if (config.reservedPrefixOf(key) != null) {
      return false;
    }
    Item current = items.get(key);
    return current == null || !current.pinned();
  }

  /**
   * A connection closed: the I leases it was granted are dropped now, since only it was told their tokens and no
   * fill will come. Its Q leases, staged values and tid and session records stay until they are ended or lapse: a
   * client may end a transaction on another of its connections, and dropping a Q lease early would let a reader
   * cache a value older than the writer's. A leaving server waits for it no longer ({@link Handover}).
   */
  void closed(Client client) {
    handover.closed(client);
    scheduler.execute(() -> leases.dropInhibitsOf(client.held(), locks, now()));
  }

  /** Stores an item and answers the way every storage command does. */
  String store(String key, Item item) {
    return items.put(key, item) == ItemStore.StoreResult.STORED ? "STORED" : OUT_OF_PINNED_MEMORY;
  }

  /** Distinct from {@code NOT_STORED}, which means a lost lease or a failed condition. */
  static final String OUT_OF_PINNED_MEMORY = "SERVER_ERROR out of pinned memory";

  /**
   * {@code flush_all <delay>}: drops the unpinned items now, or once the delay has passed. The delay is an exptime, as in
   * memcached (seconds up to 30 days, a Unix time beyond). The server keeps one delayed flush, as memcached keeps one
   * flush time: a later {@code flush_all}, delayed or not, replaces it, so clients cannot pile up scheduled tasks. It
   * is charged to {@code client} until it runs or is replaced. A client that may not change reserved keys leaves
   * them: write-back's locks are unpinned items, and dropping them would let two writers in.
   *
   * @throws MalformedRequestException when the delay falls more than 30 days ahead (one beyond {@link Long#MAX_VALUE}
   *     came in as an unsigned 64-bit number): nothing changes
   * @throws HeldBytes.LimitException when {@code client} may not hold the delayed flush: nothing changes
   */
  synchronized void flush(long delay, Client client) {
    long at = expiryOf(delay < 0 ? Long.MAX_VALUE : delay);
    long delayMillis = at == 0 ? 0 : at - now();
    if (delayMillis > MAX_RELATIVE_EXPTIME_SECONDS * 1000) {
      throw new MalformedRequestException("flush_all delay more than 30 days ahead");
    }
    Predicate<String> dropped =
        client.mayChangePinned() ? key -> true : key -> config.reservedPrefixOf(key) == null;
    HeldBytes.Charge charge = null;
    if (delayMillis > 0) {
      charge = client.charge();
      charge.add(HeldBytes.RECORD_OVERHEAD);
    }
    endPendingFlush();
    long flush = ++flushes;
    if (delayMillis <= 0) {
      items.clearUnpinned(dropped);
      return;
    }
    pendingFlushCharge = charge;
    pendingFlush =
        scheduler.schedule(
            () -> runPendingFlush(flush, dropped), delayMillis, TimeUnit.MILLISECONDS);
  }

  private synchronized void runPendingFlush(long flush, Predicate<String> dropped) {
    if (flush == flushes) {
      items.clearUnpinned(dropped);
      endPendingFlush();
    }
  }

  private void endPendingFlush() {
    if (pendingFlush != null) {
      pendingFlush.cancel(false);
      pendingFlushCharge.releaseAll();
      pendingFlush = null;
      pendingFlushCharge = null;
    }
  }

  /** Periodic clean-up of lapsed leases, records and pinned items. */
  void sweep() {
    long now = now();
    leases.sweep(locks, now);
    transactions.sweep(now);
    sessions.sweep();
    items.purgeExpiredPinned(locks);
  }
}
