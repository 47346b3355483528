package io.dendrite.coordination;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DendriteMetrics;
import io.dendrite.core.DomainType;
import io.dendrite.core.FenceToken;
import io.dendrite.core.Interval;
import io.dendrite.core.LocalCoordinator;
import io.dendrite.core.OutcomeUnknownException;
import io.dendrite.core.OwnedRange;
import io.dendrite.core.RangeCache;
import io.dendrite.core.RangeNotOwnedException;
import io.dendrite.core.StoreFence;
import io.dendrite.core.StoreFencedOutException;
import io.dendrite.core.WriteBuffer;
import io.dendrite.core.WriteBuffers;
import io.dendrite.iq.client.FenceScope;
import io.dendrite.iq.client.FencedOutException;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.ServerAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ranges a {@link PartitionedDendrite} process serves, and how it comes to serve one and stops: taking a range
 * over (raise its fence, rebuild its Dendrite and write buffer, drain what a predecessor that did not hand it over
 * left buffered), running operations as its owner (fenced, counted in flight), and giving it up (wait for those in
 * flight, then close). What is forwarded where is {@link PartitionedDendrite}'s business.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
final class ServedRanges<K extends Comparable<? super K>, R> {
  private static final Logger LOG = LoggerFactory.getLogger(ServedRanges.class);

  private final DomainType<K> type;
  private final String collection;
  private final String domain;
  private final RangeLayout<K> layout;
  private final IqClient cache;

  /** A new builder with the Dendrite's settings, for each range's {@link RangeCache}. */
  private final Supplier<Dendrite.Builder<K, R>> settings;

  /** Write-back's buffers, opened per range; null unless the Dendrite writes back. */
  private final WriteBuffers<?> writeBack;

  private final LongAdder servedHere;

  /** The ranges' fences in the data store, raised at each takeover; null when the data store is not fenced. */
  private final StoreFence storeFence;

  /** The negative control: every process believes it owns every range, and nobody forwards. */
  private final boolean everyRangeOwned;

  /** One open Dendrite per range in this process, as in a single process. */
  private final LocalCoordinator localClaims = new LocalCoordinator();

  private final ConcurrentMap<String, Served<K, R>> served = new ConcurrentHashMap<>();

  /** What the ranges' Dendrites did here, those served now and those given up. */
  private final RangeCounts counts = new RangeCounts();

  private final Map<String, Integer> indexOfRange = new HashMap<>();

  /** Set once started: until then nothing counts as owned (a range taken meanwhile waits for it). */
  private volatile ZooKeeperOwnership coordinator;

  ServedRanges(
      DomainType<K> type,
      String collection,
      String domain,
      RangeLayout<K> layout,
      IqClient cache,
      Supplier<Dendrite.Builder<K, R>> settings,
      WriteBuffers<?> writeBack,
      boolean everyRangeOwned,
      LongAdder servedHere,
      StoreFence storeFence) {
    this.type = type;
    this.collection = collection;
    this.domain = domain;
    this.layout = layout;
    this.cache = cache;
    this.settings = settings;
    this.writeBack = writeBack;
    this.everyRangeOwned = everyRangeOwned;
    this.servedHere = servedHere;
    this.storeFence = storeFence;
    for (int index = 0; index < layout.size(); index++) {
      indexOfRange.put(rangeId(index), index);
    }
  }

  /** The coordinator whose ownerships count from now on. */
  void attach(ZooKeeperOwnership started) {
    this.coordinator = started;
  }

  /** The id of range {@code index}: {@code <collection>.<domain>.<index>}. */
  String rangeId(int index) {
    return collection + "." + rangeDomain(index);
  }

  /** Whether this process serves {@code range} now. */
  boolean serves(String range) {
    return served.containsKey(range);
  }

  /**
   * What the ranges' Dendrites did here, added up: gets, hits and misses served as the owner (this process's own and
   * those forwarded to it), writes, and what they hold now; null when this process has served no range yet.
   */
  DendriteMetrics counts() {
    return counts.total();
  }

  /** The ranges served now. */
  Set<String> servedRanges() {
    return new TreeSet<>(served.keySet());
  }

  /** An operation run as a range's owner, told where to note that its write reached the data store. */
  @FunctionalInterface
  interface AsOwner<K extends Comparable<? super K>, R, T> {
    T run(Served<K, R> local, AtomicBoolean applied);
  }

  /** A range's ownership at one epoch, as handed to its write buffer. */
  private record Lease(
      String collection,
      String domain,
      String attribute,
      String fence,
      long epoch,
      BooleanSupplier stillOwned)
      implements OwnedRange {
    @Override
    public boolean held() {
      return stillOwned.getAsBoolean();
    }
  }

  /**
   * Runs {@code operation} as {@code range}'s owner: only while this process owns it under the epoch it rebuilt it
   * at, with every cache request guarded by the range's fence, and counted as in flight so that giving the range up
   * waits for it.
   *
   * @throws ForwardingException {@code NOT_OWNER} when this process does not serve the range, and when the cache
   *     fenced the operation out before it changed the data store: it may then run at the owner
   */
  <T> T runServed(String range, boolean write, AsOwner<K, R, T> operation) {
    Served<K, R> local = served.get(range);
    if (local == null || !owns(range, local.epoch) || !local.enter()) {
      throw ForwardingException.notOwner("this process does not serve " + range + " now");
    }
    AtomicBoolean applied = new AtomicBoolean();
    try (FenceScope fenced = cache.fences().guard(local.fence, local.epoch)) {
      servedHere.increment();
      return operation.run(local, applied);
    } catch (RuntimeException failed) {
      if (!applied.get() && causeOf(failed, RangeNotOwnedException.class) != null) {
        // Its write buffer saw the range move before it changed anything: the write may run at the
        // owner.
        throw ForwardingException.notOwner(range + ": " + failed.getMessage());
      }
      StoreFencedOutException storeRefused = causeOf(failed, StoreFencedOutException.class);
      if (storeRefused != null) {
        // The data store refused the statement and changed nothing: the write may run at the owner.
        throw ForwardingException.notOwner(range + ": " + storeRefused.getMessage());
      }
      FencedOutException fencedOut = causeOf(failed, FencedOutException.class);
      if (fencedOut == null) {
        throw failed;
      }
      if (fencedOut.fenceEpoch() < local.epoch) {
        // A cache server restarted empty (no fence): raise it again, as the owner.
        raiseFence(local.fence, local.epoch);
      }
      if (applied.get()) {
        // The statement may have reached the data store (with a store fence, only before the new
        // owner took the range over), but the cache commit did not: never report it as done.
        throw new OutcomeUnknownException(
            range
                + ": the write's statement ran, then its cache commit was fenced out (the range has a"
                + " new owner); it may have been applied: "
                + fencedOut.getMessage(),
            failed);
      }
      if (write && local.buffer != null) {
        // Part of the buffered write may have been stored before the fence rose: the new owner may
        // drain it.
        throw new OutcomeUnknownException(
            range + ": fenced out while buffering the write: " + fencedOut.getMessage(), failed);
      }
      throw ForwardingException.notOwner(range + ": " + fencedOut.getMessage());
    } finally {
      local.exit();
    }
  }

  /**
   * Whether {@code local}'s fence stands above its epoch on some cache server now (or a server could not tell):
   * asked with a request guarded by the fence at that epoch on every server, from inside the operation's fence
   * scope. Sent after the operation's commit was answered, so a pass everywhere means the commit was not fenced out
   * (fences never go down).
   */
  boolean fenceMovedOn(Served<K, R> local) {
    try (FenceScope fenced = cache.fences().guard(local.fence, local.epoch)) {
      for (ServerAddress server : cache.config().servers()) {
        cache.servers().getOn(server, local.fence);
      }
      return false;
    } catch (IqException refusedOrUnreachable) {
      return true;
    }
  }

  /** The exception of type {@code type} behind {@code failure} (itself or a cause), or null. */
  private static <T extends Throwable> T causeOf(Throwable failure, Class<T> type) {
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (type.isInstance(cause)) {
        return type.cast(cause);
      }
    }
    return null;
  }

  /**
   * Whether ZooKeeper still gives this process the range at {@code epoch} (always, for the negative control, whose
   * processes all believe they own every range).
   */
  private boolean leaseHeld(String range, long epoch) {
    ZooKeeperOwnership current = coordinator;
    return everyRangeOwned || (current != null && current.owns(range, epoch));
  }

  /** Whether this process owns {@code range} at {@code epoch}, as far as it can tell now. */
  boolean owns(String range, long epoch) {
    if (everyRangeOwned) {
      return served.containsKey(range); // the negative control owns whatever it serves
    }
    ZooKeeperOwnership current = coordinator;
    return current != null && current.owns(range, epoch);
  }

  /**
   * Takes a range over: raises its fence to the new epoch on every cache server, so nothing the previous owner still
   * sends changes the cache, then rebuilds PrInT from the range's log records; only then does the range count as
   * served. A previous owner that did not hand the range over may have stopped between a write's data-store statement
   * and its cache commit, leaving a cached result older than the data store under a lease that only lapses: then
   * every cached result of the range is dropped instead of served.
   */
  void gained(String range, long epoch, boolean handedOver) {
    Served<K, R> earlier = served.get(range);
    if (earlier != null) {
      // Taken again before the earlier ownership was given up (it should not happen): give that
      // up first, or its Dendrite would keep the range's claim and this one could not be built.
      LOG.warn("{}: gained at epoch {} while still serving epoch {}", range, epoch, earlier.epoch);
      lost(range, earlier.epoch);
    }
    String fence = "Fence:" + range;
    raiseFence(fence, epoch);
    int index = indexOfRange.get(range);
    while (true) {
      try (FenceScope fenced = cache.fences().guard(fence, epoch)) {
        if (storeFence != null) {
          // Before anything of the range is read: a former owner's statement either committed
          // before this returns or is refused by the data store.
          storeFence.raise(
              new StoreFence.Range(
                  fence, collection, domain, layout.lowerOf(index), layout.upperOf(index), epoch));
        }
        Lease lease =
            new Lease(
                collection,
                rangeDomain(index),
                domain,
                fence,
                epoch,
                () -> leaseHeld(range, epoch));
        // An outage tolerance's guard opens for this ownership: what it keeps is applied under it.
        Dendrite.Builder<K, R> settings =
            rangeBuilder(index).dropCachedOnBuild(!handedOver).ownedUnder(lease);
        WriteBuffer<K, ?> buffer = writeBack == null ? null : writeBack.open(type, lease, cache);
        RangeCache<K, R> dendrite;
        try {
          dendrite = (buffer == null ? settings : settings.writeBackInto(buffer)).buildRangeCache();
          if (buffer != null && !handedOver) {
            // The previous owner's buffered writes reach the data store before anything is served:
            // a miss would apply those it overlaps anyway, this applies them all now. Nothing else
            // runs on the range yet.
            buffer.applyOverlapping(Interval.of(layout.lowerOf(index), layout.upperOf(index)));
          }
        } catch (RuntimeException failed) {
          closeQuietly(buffer);
          throw failed;
        }
        counts.serving(dendrite);
        served.put(
            range,
            new Served<>(
                dendrite,
                buffer,
                epoch,
                fence,
                storeFence == null ? null : new FenceToken(fence, epoch)));
        return;
      } catch (RuntimeException failed) {
        ZooKeeperOwnership current = coordinator;
        if (current != null && !current.owns(range, epoch)) {
          return;
        }
        FencedOutException fencedOut = causeOf(failed, FencedOutException.class);
        if (fencedOut != null && fencedOut.fenceEpoch() > epoch) {
          // Fences never go down: this epoch can never pass it, and retrying would spin forever.
          LOG.error(
              "{}: not served: {} stands at epoch {} on a cache server, above this owner's {}, and fences"
                  + " never go down; only an owner with a larger epoch, or that server restarted empty, can"
                  + " serve the range ({})",
              range,
              fence,
              fencedOut.fenceEpoch(),
              epoch,
              fencedOut.getMessage());
          return;
        }
        LOG.warn("{}: could not rebuild the range, trying again: {}", range, failed.toString());
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** Stops serving a range: waits for the operations in flight, then appends its log records and closes it. */
  void lost(String range, long epoch) {
    Served<K, R> local = served.get(range);
    if (local == null || local.epoch != epoch || !served.remove(range, local)) {
      return;
    }
    local.stop();
    try (FenceScope fenced = cache.fences().guard(local.fence, local.epoch)) {
      local.dendrite.close();
      closeQuietly(local.buffer);
    } catch (RuntimeException e) {
      LOG.debug("{}: closing the range after losing it: {}", range, e.toString());
    } finally {
      counts.gaveUp(local.dendrite);
    }
  }

  private static void closeQuietly(WriteBuffer<?, ?> buffer) {
    if (buffer != null) {
      try {
        buffer.close();
      } catch (RuntimeException e) {
        LOG.debug("closing a range's write buffer: {}", e.toString());
      }
    }
  }

  private void raiseFence(String fence, long epoch) {
    try {
      cache.fences().raise(fence, epoch);
    } catch (IqException e) {
      // A server that cannot be reached now has either lost everything (restarted empty: the fence
      // is raised again when a request meets FENCED_OUT 0) or is cut off, and then nobody's
      // requests reach it.
      LOG.warn("raising {} to {}: {}", fence, epoch, e.toString());
    }
  }

  Dendrite.Builder<K, R> rangeBuilder(int index) {
    return settings
        .get()
        .collection(collection)
        .domain(rangeDomain(index))
        .range(layout.lowerOf(index), layout.upperOf(index))
        .cache(cache)
        .coordinator(this::claim);
  }

  /**
   * The {@link io.dendrite.core.Coordinator} behind each range's Dendrite: a range may be claimed here only while
   * ZooKeeper says this process owns it, and only once at a time.
   */
  private io.dendrite.core.Coordinator.RangeClaim claim(String collection, String rangeDomain) {
    String range = collection + "." + rangeDomain;
    ZooKeeperOwnership current = coordinator;
    Long epoch = current == null ? null : current.owned().get(range);
    if (current != null && epoch == null) {
      throw new IllegalStateException("range " + range + " is not owned by this process");
    }
    io.dendrite.core.Coordinator.RangeClaim local = localClaims.claim(collection, rangeDomain);
    return new io.dendrite.core.Coordinator.RangeClaim() {
      @Override
      public boolean excludesOtherOwners() {
        return true; // ZooKeeper grants the range to one process, and the fence keeps a former
        // owner out
      }

      /**
       * Refuses once ZooKeeper's grant at this epoch no longer holds as far as this process can tell: the range moved,
       * or this process has not heard from ZooKeeper within its share of the session (a paused process cannot see its
       * session end, so the ownership counts only until a deadline each answered heartbeat pushes forward).
       */
      @Override
      public void check() {
        if (epoch != null && !current.owns(range, epoch)) {
          throw new RangeNotOwnedException(
              "range "
                  + range
                  + " at epoch "
                  + epoch
                  + " is no longer owned by this process (it moved, or ZooKeeper has not answered within the"
                  + " session's deadline)");
        }
      }

      /** The grant's deadline bounds how long a copy in memory can be trusted: see {@link #check}. */
      @Override
      public boolean mayKeepResultsInMemory() {
        return epoch != null;
      }

      @Override
      public void close() {
        local.close();
      }
    };
  }

  /** The domain name of range {@code index}'s Dendrite, and so of its cache and log keys. */
  private String rangeDomain(int index) {
    return domain + "." + index;
  }

  /** A range this process serves: its Dendrite, the epoch it took it at, and the operations in flight on it. */
  static final class Served<K extends Comparable<? super K>, R> {
    final RangeCache<K, R> dendrite;
    final WriteBuffer<K, ?> buffer;
    final long epoch;
    final String fence;

    /** What the owner's data-store statements carry; null when the data store is not fenced. */
    final FenceToken storeToken;

    private final ReentrantReadWriteLock inFlight = new ReentrantReadWriteLock();
    private volatile boolean stopping;

    Served(
        RangeCache<K, R> dendrite,
        WriteBuffer<K, ?> buffer,
        long epoch,
        String fence,
        FenceToken storeToken) {
      this.dendrite = dendrite;
      this.buffer = buffer;
      this.epoch = epoch;
      this.fence = fence;
      this.storeToken = storeToken;
    }

    /** Counts an operation in, unless the range is being given up. */
    boolean enter() {
      if (stopping || !inFlight.readLock().tryLock()) {
        return false;
      }
      if (stopping) {
        inFlight.readLock().unlock();
        return false;
      }
      return true;
    }

    void exit() {
      inFlight.readLock().unlock();
    }

    /** Lets no operation in, and waits for those in flight. */
    void stop() {
      stopping = true;
      inFlight.writeLock().lock();
    }
  }
}
