package io.dendrite.coordination;

import io.dendrite.core.BoundNames;
import io.dendrite.core.CachedReads;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DendriteBusyException;
import io.dendrite.core.DendriteMetrics;
import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import io.dendrite.core.LocalCoordinator;
import io.dendrite.core.NotAppliedException;
import io.dendrite.core.OutcomeUnknownException;
import io.dendrite.core.RangeQuery;
import io.dendrite.core.RowCodec;
import io.dendrite.core.WriteCommand;
import io.dendrite.iq.client.TierClaim;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One collection's domain cached by a service of many application processes (the CPR paper, §3 and Figure 2): the
 * domain is split into ranges, ZooKeeper gives each range to one process at a time ({@link ZooKeeperOwnership}),
 * the owner keeps the range's PrInT, LeMInT and log in a {@link Dendrite} of its own, and every other process sends
 * the range's misses and writes to it ({@link ForwardingServer}). A hit needs no owner: any process reads the exact
 * interval's cached entry directly ({@link CachedReads}).
 *
 * <p>A {@link Dendrite} built with the deployment {@link ManyProcesses} is one. Every process builds the same: the
 * same domain, ranges and Dendrite settings, and the same queries and write commands under the same names, because a
 * forwarded request names them and the owner runs its own bound ones.
 *
 * <p>An owner serves a range only while {@link ZooKeeperOwnership#owns} says so, and every cache request it sends for
 * the range is guarded by the range's fence at its epoch ({@link io.dendrite.iq.client.Fences#guard}), which it raised
 * before it rebuilt the range: an owner that paused past its session and resumes changes nothing in the cache. A write
 * checks ownership once more just before its data-store statement; with {@link ManyProcesses#storeFence} the statement itself
 * is fenced in the data store, so a former owner's statement that arrives after a takeover is refused (see {@code
 * docs/coordination.md}, "Fencing the data store", for which statements are, and what is left open).
 *
 * <p>A get spanning several ranges is split at their bounds and its parts are served where their ranges live; a write
 * must lie in one range. Thread-safe.
 *
 * @param <K> the attribute's type (a whole number: {@link DomainType#INTEGER} or {@link DomainType#LONG})
 * @param <R> the row type
 */
public final class PartitionedDendrite<K extends Comparable<? super K>, R>
    implements Dendrite<K, R> {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionedDendrite.class);
  private static final String GET = "dendrite.get";
  private static final String WRITE = "dendrite.write";
  private static final long RETRY_PAUSE_MILLIS = 10;
  private static final byte[] NO_COMMAND = new byte[0];

  private final DomainType<K> type;
  private final RowCodec<K, R> rows;
  private final String collection;
  private final String domain;
  private final K min;
  private final K max;
  private final RangeLayout<K> layout;
  private final List<String> ranges;
  private final Map<String, RangeQuery<K, R>> queries;
  private final Map<String, WriteCommand<K, R, ?>> commands;
  private final List<CachedReads<K, R>> reads = new ArrayList<>();
  private final Duration requestTimeout;

  private final ServedRanges<K, R> served;
  private final Counters counters = new Counters();
  private final ForwardingClient client;
  private final ForwardingServer server;
  private final ZooKeeperOwnership coordinator;

  /**
   * The range's ownership record in the cache tier, held shared with the service's other processes: a plain
   * Dendrite on the same range (which holds it exclusively) cannot start beside them, nor they beside it.
   */
  private final TierClaim sharedRecord;

  /** Whether each range's writes go through its outage-tolerance guard (which fences its own statements). */
  private final boolean guarded;

  PartitionedDendrite(Dendrite.Settings<K, R> settings, ManyProcesses processes) {
    this.sharedRecord =
        LocalCoordinator.joinPartitioned(
            settings.cache(), settings.collection(), settings.domain());
    try {
      this.type = settings.type();
      this.rows = settings.rows();
      this.collection = settings.collection();
      this.domain = settings.domain();
      this.min = settings.min();
      this.max = settings.max();
      this.layout = new RangeLayout<>(type, min, max, processes.ranges);
      this.queries = settings.queries();
      this.commands = settings.commands();
      this.guarded = settings.outageTolerance() != null;
      this.requestTimeout = processes.requestTimeout;
      this.served =
          new ServedRanges<>(
              type,
              collection,
              domain,
              layout,
              settings.cache(),
              settings.rangeCache(),
              settings.writeBuffers(),
              processes.ownEveryRange,
              counters.servedHere,
              processes.storeFenceOff ? null : processes.storeFence);
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < layout.size(); i++) {
        ids.add(served.rangeId(i));
        reads.add(served.rangeBuilder(i).buildReads());
      }
      this.ranges = List.copyOf(ids);
      this.client =
          new ForwardingClient(
              processes.ownEveryRange
                  ? ForwardingSecurity.unauthenticatedOnLoopback()
                  : processes.forwardingSecurity);
      if (processes.ownEveryRange) {
        // The negative control: every process believes it owns every range, nobody forwards.
        this.server = null;
        this.coordinator = null;
        ranges.forEach(range -> served.gained(range, 1, true));
        return;
      }
      try {
        this.server =
            ForwardingServer.builder()
                .host(processes.host)
                .port(processes.port)
                .threads(processes.forwardingThreads)
                .ownership(served::owns)
                .security(processes.forwardingSecurity)
                .start();
      } catch (RuntimeException e) {
        client.close();
        sharedRecord.close();
        throw e;
      }
      server.register(GET, this::serveForwardedGet);
      server.register(WRITE, this::serveForwardedWrite);
      try {
        ZooKeeperOwnership.Builder coordination = ZooKeeperOwnership.builder();
        if (processes.zooKeeperUser != null) {
          coordination.credentials(processes.zooKeeperUser, processes.zooKeeperPassword);
        }
        this.coordinator =
            coordination
                .connectString(processes.connectString)
                .service(processes.service + "." + collection + "." + domain)
                .member(processes.member)
                .endpoint(server.endpoint())
                .sessionTimeout(processes.sessionTimeout)
                .ranges(ranges)
                .listener(new ServingListener(processes.ownershipListener))
                .start();
        served.attach(coordinator);
      } catch (RuntimeException e) {
        server.close();
        client.close();
        sharedRecord.close();
        throw e;
      }
    } catch (RuntimeException failed) {
      // Nothing else would stop renewing it: the range would stay closed to a plain Dendrite here.
      sharedRecord.close();
      throw failed;
    }
  }

  /**
   * Serves the ranges the coordinator grants and stops serving those it takes away, counts both, then tells the
   * application's listener, whose failure is logged and changes nothing here.
   */
  private final class ServingListener implements OwnershipListener {
    private final OwnershipListener application;

    ServingListener(OwnershipListener application) {
      this.application = application;
    }

    @Override
    public void gained(String range, long epoch) {
      gained(range, epoch, false);
    }

    @Override
    public void gained(String range, long epoch, boolean handedOver) {
      served.gained(range, epoch, handedOver);
      (handedOver ? counters.handedOver : counters.takenOver).increment();
      tell(() -> application.gained(range, epoch, handedOver), "gained", range);
    }

    @Override
    public void lost(String range, long epoch) {
      served.lost(range, epoch);
      counters.lost.increment();
      tell(() -> application.lost(range, epoch), "lost", range);
    }

    private void tell(Runnable call, String what, String range) {
      if (application == null) {
        return;
      }
      try {
        call.run();
      } catch (RuntimeException e) {
        LOG.warn("the ownership listener failed on {} {}", what, range, e);
      }
    }
  }

  /**
   * The rows whose attribute lies in [{@code lowerBound}, {@code upperBound}], ordered by the attribute: each range's
   * part from the cache if it holds it, otherwise from the query bound under {@code query}, run by the range's
   * owner (this process or another), which caches the result.
   *
   * @throws IllegalArgumentException for bad bounds (as {@link Dendrite#get}) or an unregistered query
   * @throws io.dendrite.core.DataStoreException if the query failed at the owner
   * @throws DendriteBusyException if no owner served a part within the request timeout, or leases stayed taken
   */
  @Override
  public List<R> get(String query, K lowerBound, K upperBound) {
    Interval<K> interval = interval(lowerBound, upperBound);
    RangeQuery<K, R> function = BoundNames.lookUp(queries, "query", query, rangeName());
    List<R> found = new ArrayList<>();
    for (RangeLayout.Part<K> part : layout.split(interval)) {
      found.addAll(getPart(part, query, function));
    }
    return found;
  }

  /**
   * Writes {@code command}, of the kind bound under {@code kind}, touching [{@code lowerBound}, {@code
   * upperBound}]: the range's owner applies it to the data store and deletes or updates the cached results it
   * touches, as {@link Dendrite#write}. The interval must lie in one range.
   *
   * @throws IllegalArgumentException for bad bounds, an interval crossing ranges, an unregistered kind or a command
   *     of another type
   * @throws io.dendrite.core.DataStoreException if the data store refused the write at the owner
   * @throws DendriteBusyException if no owner took the write within the request timeout (it was not applied)
   * @throws OutcomeUnknownException if the owner had the write and did not answer: it may have been applied
   */
  @Override
  public <C> void write(String kind, K lowerBound, K upperBound, C command) {
    try {
      writeNamed(kind, lowerBound, upperBound, command);
    } catch (RuntimeException failure) {
      throw NotAppliedException.orOutcomeUnknown(failure);
    }
  }

  private <C> void writeNamed(String kind, K lowerBound, K upperBound, C command) {
    Interval<K> interval = interval(lowerBound, upperBound);
    WriteCommand<K, R, C> writeKind = kindOf(kind, command);
    List<RangeLayout.Part<K>> parts = layout.split(interval);
    if (parts.size() > 1) {
      RangeLayout.Part<K> last = parts.get(parts.size() - 1);
      throw new IllegalArgumentException(
          "a write must lie in one range: "
              + interval
              + " crosses ranges "
              + ranges.get(parts.get(0).range())
              + " to "
              + ranges.get(last.range())
              + " (the next starts at "
              + layout.lowerOf(parts.get(1).range())
              + "); write each range's part on its own");
    }
    String range = ranges.get(parts.get(0).range());
    byte[] body =
        ForwardedCalls.call(
            new ForwardedCalls.Call(
                kind,
                type.format(interval.lo()),
                type.format(interval.hi()),
                writeKind.encode(command)));
    atOwner(
        range,
        WRITE,
        body,
        true,
        (local, applied) -> {
          writeAsOwner(range, local, applied, interval, command, writeKind);
          return null;
        },
        (answer, owner) -> {
          ForwardedCalls.readDone(answer, owner);
          return null;
        });
  }

  /** What this process has done so far, copied now. */
  public Metrics metrics() {
    DendriteMetrics owned = served.counts();
    return counters.snapshot(owned == null ? 0 : owned.nearHits());
  }

  /**
   * This process's gets as a one-process Dendrite counts them, for the cache meters ({@link PartitionedMeters}):
   * each part of a get (one per range it spans) counts once in the service, in the process that answered it. Hits
   * are the parts this process read directly from the cache for ranges served elsewhere (one round trip each) and
   * the hits of the ranges it serves as their owner, near-cache hits among them; misses are the parts that queried
   * the data store here, as the owner. A part this process forwards counts at its owner, as the owner's hit or miss
   * (the requests it forwards: {@link Metrics#forwardedGets}), and so do the owner's writes, puts and holdings: the
   * ranges it serves now and the counts of those it served before.
   */
  public DendriteMetrics cacheMetrics() {
    long direct = counters.directHits.sum();
    // Gets and hits, one round trip each (CachedReads' one get); no near cache, writes or holdings.
    DendriteMetrics directHits =
        new DendriteMetrics(direct, direct, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0);
    DendriteMetrics owned = served.counts();
    return owned == null ? directHits : owned.plus(directHits);
  }

  /** {@code <collection>.<domain>}: every range of the service's domain together. */
  @Override
  public String rangeName() {
    return collection + "." + domain;
  }

  /** The ranges this process serves now. */
  public List<String> servedRanges() {
    return List.copyOf(served.servedRanges());
  }

  /**
   * Waits until at least {@code processes} processes have joined and the ranges have settled — each has an owner
   * where the spread over the live processes puts it, and this process serves its own — or {@code timeout} passes.
   * Operations work meanwhile (they wait for owners); this is for a process that wants its share before it starts,
   * as a benchmark does.
   *
   * @return whether they settled in time
   */
  public boolean awaitSettled(int processes, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() - deadline < 0) {
      if (coordinator == null
          || (coordinator.members().size() >= processes
              && coordinator.settled()
              && served.servedRanges().equals(coordinator.owned().keySet()))) {
        return true;
      }
      Thread.sleep(20);
    }
    return false;
  }

  /** The range ids, in domain order: {@code <collection>.<domain>.<i>}. */
  public List<String> ranges() {
    return ranges;
  }

  /** Gives every range up (appending their log records first) and leaves the service. */
  @Override
  public void close() {
    try {
      if (coordinator != null) {
        coordinator.close();
      } else {
        ranges.forEach(range -> served.lost(range, 1));
      }
    } finally {
      if (server != null) {
        server.close();
      }
      client.close();
      sharedRecord.close();
    }
  }

  /**
   * What a process did: operations served here as the range's owner, hits read directly from the cache for ranges
   * served elsewhere, gets and writes forwarded (each one round trip to the owner), forwards that found no owner or
   * the wrong one and were sent again, and gets of ranges served here answered from the near cache (no round trip).
   */
  public record Metrics(
      long servedHere,
      long directHits,
      long forwardedGets,
      long forwardedWrites,
      long resent,
      long nearHits,
      long rangesHandedOverHere,
      long rangesTakenOver,
      long rangesLost) {}

  private List<R> getPart(RangeLayout.Part<K> part, String query, RangeQuery<K, R> function) {
    String range = ranges.get(part.range());
    Interval<K> interval = part.interval();
    if (!served.serves(range)) {
      Optional<List<R>> hit = reads.get(part.range()).get(interval.lo(), interval.hi());
      if (hit.isPresent()) {
        counters.directHits.increment();
        return hit.get();
      }
    }
    byte[] body =
        ForwardedCalls.call(
            new ForwardedCalls.Call(
                query, type.format(interval.lo()), type.format(interval.hi()), NO_COMMAND));
    return atOwner(
        range,
        GET,
        body,
        false,
        (local, applied) -> local.dendrite.get(interval.lo(), interval.hi(), function),
        (answer, owner) ->
            ForwardedCalls.readRows(answer, owner).stream().map(rows::decode).toList());
  }

  /**
   * Runs an operation on {@code range} where its owner is: here while this process serves it, else at the owner the
   * coordinator names. A forward that finds no owner, or the wrong one, or (a get) loses its connection, is sent
   * again to whoever owns the range then, until the request timeout.
   */
  private <T> T atOwner(
      String range,
      String operation,
      byte[] body,
      boolean write,
      ServedRanges.AsOwner<K, R, T> asOwner,
      ForwardedAnswer<T> answer) {
    long deadline = System.nanoTime() + requestTimeout.toNanos();
    RuntimeException last = null;
    while (true) {
      if (served.serves(range)) {
        try {
          return served.runServed(range, write, asOwner);
        } catch (ForwardingException notServed) {
          last = notServed; // it moved meanwhile
        }
      } else if (coordinator != null) {
        Optional<RangeOwner> owner = coordinator.ownerOf(range);
        if (owner.isPresent() && !owner.get().member().equals(coordinator.member())) {
          long left = Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadline - System.nanoTime());
          (write ? counters.forwardedWrites : counters.forwardedGets).increment();
          byte[] reply;
          try {
            reply =
                client
                    .call(
                        owner.get().endpoint(),
                        operation,
                        range,
                        owner.get().epoch(),
                        body,
                        Duration.ofNanos(left))
                    .join();
          } catch (CompletionException failed) {
            ForwardingException forwarding = forwardingFailure(failed);
            boolean again =
                forwarding.retryAtNewOwner()
                    || (!write
                        && forwarding.reason() == ForwardingException.Reason.CONNECTION_LOST);
            if (!again) {
              throw unforwarded(forwarding, range, write);
            }
            last = forwarding;
            counters.resent.increment();
            pause(deadline);
            continue;
          }
          return answer.read(reply, owner.get().member());
        }
      }
      if (System.nanoTime() - deadline > 0) {
        throw new DendriteBusyException(
            "no owner served range " + range + " within " + requestTimeout, last);
      }
      pause(deadline);
    }
  }

  /** How a forwarded operation's answer is read: its result, or the owner's failure thrown again. */
  @FunctionalInterface
  private interface ForwardedAnswer<T> {
    T read(byte[] answer, String owner);
  }

  private static ForwardingException forwardingFailure(CompletionException failed) {
    if (failed.getCause() instanceof ForwardingException forwarding) {
      return forwarding;
    }
    throw failed;
  }

  /** A forwarding failure that must not be retried, as what the caller gets. */
  private static RuntimeException unforwarded(
      ForwardingException failure, String range, boolean write) {
    String where = "range " + range + ": " + failure.getMessage();
    return switch (failure.reason()) {
      case BUSY, DEADLINE_PASSED -> new DendriteBusyException(where + " (not run)", failure);
      case TIMED_OUT, CONNECTION_LOST ->
          write
              ? new OutcomeUnknownException(where + "; the write may have been applied", failure)
              : new DendriteBusyException(where, failure);
        // Refused before anything ran: the processes disagree on their security or on what they
        // bound.
      case NOT_AUTHENTICATED, UNKNOWN_OPERATION -> new NotAppliedException(where, failure);
      default -> new IllegalStateException(where, failure);
    };
  }

  private static void pause(long deadline) {
    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    try {
      Thread.sleep(Math.max(1, Math.min(RETRY_PAUSE_MILLIS, left)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DendriteBusyException("interrupted while looking for a range's owner", e);
    }
  }

  private byte[] serveForwardedGet(String range, byte[] body) {
    ForwardedCalls.Call call = ForwardedCalls.readCall(body);
    try {
      RangeQuery<K, R> function = BoundNames.lookUp(queries, "query", call.name(), rangeName());
      K lower = type.parse(call.lower());
      K upper = type.parse(call.upper());
      List<R> found =
          served.runServed(
              range, false, (local, applied) -> local.dendrite.get(lower, upper, function));
      return ForwardedCalls.rows(found.stream().map(rows::encode).toList());
    } catch (ForwardingException notServed) {
      throw notServed;
    } catch (RuntimeException failure) {
      return ForwardedCalls.failure(failure);
    }
  }

  private byte[] serveForwardedWrite(String range, byte[] body) {
    ForwardedCalls.Call call = ForwardedCalls.readCall(body);
    try {
      serveWrite(
          range, call, BoundNames.lookUp(commands, "write command", call.name(), rangeName()));
      return ForwardedCalls.done();
    } catch (ForwardingException notServed) {
      throw notServed;
    } catch (RuntimeException failure) {
      return ForwardedCalls.failure(failure);
    }
  }

  private <C> void serveWrite(String range, ForwardedCalls.Call call, WriteCommand<K, R, C> kind) {
    Interval<K> interval = Interval.of(type.parse(call.lower()), type.parse(call.upper()));
    C command = kind.decode(call.command());
    served.runServed(
        range,
        true,
        (local, applied) -> {
          writeAsOwner(range, local, applied, interval, command, kind);
          return null;
        });
  }

  /**
   * The write at the owner. Ownership is looked at once more right before the data-store statement: an owner that
   * lost the range while the write waited for its leases does not apply it (the caller sends it to the new owner).
   */
  private <C> void writeAsOwner(
      String range,
      ServedRanges.Served<K, R> local,
      AtomicBoolean applied,
      Interval<K> interval,
      C command,
      WriteCommand<K, R, C> kind) {
    if (local.buffer != null || guarded) {
      // Write-back hands the command to the range's buffer, and an outage tolerance to the range's
      // guard, whose every request is fenced (its statements carry the ownership's fence token):
      // no data-store statement here to look at ownership before.
      if (guarded) {
        // The guard may write the data store or teleport part of the write before a fence stops
        // it: a failure then is never resent to the new owner (it could apply twice), unless the
        // data store refused the statement itself (StoreFencedOutException: nothing applied).
        applied.set(true);
      }
      local.dendrite.write(interval.lo(), interval.hi(), command, kind);
    } else {
      local.dendrite.write(
          interval.lo(),
          interval.hi(),
          command,
          change -> {
            if (!served.owns(range, local.epoch)) {
              throw ForwardingException.notOwner(
                  "lost " + range + " (epoch " + local.epoch + ") before applying the write");
            }
            applied.set(true);
            if (local.storeToken == null) {
              kind.apply(change);
            } else {
              kind.apply(change, local.storeToken);
            }
          },
          kind.cacheUpdate(command));
    }
    if (!served.owns(range, local.epoch) && served.fenceMovedOn(local)) {
      // The cache client reports a commit a new owner's fence refused as a lost state, not as an
      // error, and the write returns: the cache may still hold what the write changed, unchanged.
      // Never report that as done.
      throw new OutcomeUnknownException(
          range
              + " was taken over (its fence stands above epoch "
              + local.epoch
              + ") while the write ran: its cache commit may have been fenced out; it may have"
              + " been applied",
          null);
    }
  }

  @SuppressWarnings("unchecked")
  private <C> WriteCommand<K, R, C> kindOf(String kind, C command) {
    WriteCommand<K, R, ?> registered =
        BoundNames.lookUp(commands, "write command", kind, rangeName());
    BoundNames.argument(kind, registered.type(), command);
    return (WriteCommand<K, R, C>) registered;
  }

  private Interval<K> interval(K lowerBound, K upperBound) {
    return type.interval(lowerBound, upperBound, min, max);
  }

  private static final class Counters {
    final LongAdder servedHere = new LongAdder();
    final LongAdder directHits = new LongAdder();
    final LongAdder forwardedGets = new LongAdder();
    final LongAdder forwardedWrites = new LongAdder();
    final LongAdder resent = new LongAdder();
    final LongAdder handedOver = new LongAdder();
    final LongAdder takenOver = new LongAdder();
    final LongAdder lost = new LongAdder();

    Metrics snapshot(long nearHits) {
      return new Metrics(
          servedHere.sum(),
          directHits.sum(),
          forwardedGets.sum(),
          forwardedWrites.sum(),
          resent.sum(),
          nearHits,
          handedOver.sum(),
          takenOver.sum(),
          lost.sum());
    }
  }
}
