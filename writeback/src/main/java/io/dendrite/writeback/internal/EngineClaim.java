package io.dendrite.writeback.internal;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.WriteOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cache tier's record of which write-back engines may change its buffered writes, kept pinned on the engine's
 * replica servers under {@value #KEY} with a lifetime its holders renew. An engine that locks in its own process
 * ({@code singleProcess}) must be the only engine of the cache tier: it holds the record <em>exclusively</em>, and
 * any other engine, of either kind, is refused when it starts. Engines that lock by leases in the cache tier hold
 * it <em>shared</em>, so an exclusive engine cannot start beside them. Without this, two processes that both
 * declared themselves alone locked the same documents each in its own JVM and overwrote each other's buffered
 * writes.
 *
 * <p>The exclusive holder counts itself holder only until the moment its last answered renewal was sent plus 80% of
 * the lifetime ({@link #check}): the servers cannot drop the record, and so cannot let another engine in, before
 * that. A holder that was paused past it (a long GC pause) refuses its next write until a renewal shows the record
 * is still its own. A crashed holder's successor waits for the record to lapse, at most one lifetime.
 */
public final class EngineClaim implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EngineClaim.class);

  /** The record's key: one per cache tier, since every engine shares the pending-writes partitions. */
  public static final String KEY = "WriteBackEngines";

  private static final String SHARED = "shared";

  private final IqClient cache;
  private final List<ServerAddress> servers;
  private final byte[] value;
  private final boolean exclusive;
  private final Duration lifetime;
  private final ScheduledExecutorService renewer;
  private volatile long validUntilNanos;
  private volatile boolean lost;

  private EngineClaim(
      IqClient cache,
      List<ServerAddress> servers,
      String value,
      boolean exclusive,
      Duration lifetime) {
    this.cache = cache;
    this.servers = servers;
    this.value = value.getBytes(StandardCharsets.UTF_8);
    this.exclusive = exclusive;
    this.lifetime = lifetime;
    this.renewer =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "dendrite-writeback-claim");
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * Takes the record for an engine that locks in its own process: no other engine of the cache tier may run. Waits
   * up to one {@code lifetime} for a record left by a crashed engine to lapse.
   *
   * @param holder names this engine in the record and in the refusal another engine gets
   * @throws IllegalStateException naming who holds the record, when it does not lapse in time
   */
  public static EngineClaim exclusive(
      IqClient cache, int replicas, String holder, Duration lifetime) {
    return take(cache, replicas, "exclusive " + holder, true, lifetime);
  }

  /**
   * Joins the record for an engine that locks by leases in the cache tier: any number may run together, but not
   * beside an exclusive one.
   *
   * @throws IllegalStateException when an exclusive engine holds the record and it does not lapse in time
   */
  public static EngineClaim shared(IqClient cache, int replicas, Duration lifetime) {
    return take(cache, replicas, SHARED, false, lifetime);
  }

  private static EngineClaim take(
      IqClient cache, int replicas, String value, boolean exclusive, Duration lifetime) {
    if (lifetime.toSeconds() < 2) {
      throw new IllegalArgumentException(
          "the claim's lifetime must be at least 2 s, got " + lifetime);
    }
    EngineClaim claim =
        new EngineClaim(
            cache, cache.replicated(replicas).serversFor(KEY), value, exclusive, lifetime);
    long deadline = System.nanoTime() + lifetime.toNanos() + TimeUnit.SECONDS.toNanos(2);
    String holder;
    while ((holder = claim.tryTake()) != null) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "the cache tier's write-back engines are held by \""
                + holder
                + "\": "
                + (exclusive
                    ? "an engine with singleProcess(true) must be the only engine of its cache tier"
                    : "an engine with singleProcess(true) holds it, and no other engine may run beside it")
                + " (the record "
                + KEY
                + " lapses "
                + lifetime.toSeconds()
                + " s after its holder stops)");
      }
      sleep(200);
    }
    long beat = Math.max(200, lifetime.toMillis() / 4);
    claim.renewer.scheduleWithFixedDelay(claim::renew, beat, beat, TimeUnit.MILLISECONDS);
    return claim;
  }

  /**
   * Whether this engine may still change buffered writes: for the exclusive holder, whether the record is surely
   * still its own (renewing it now if the last renewal is too old).
   *
   * @throws IllegalStateException when it is not, or cannot be shown to be: nothing may be changed then
   */
  public void check() {
    if (!exclusive || System.nanoTime() - validUntilNanos < 0) {
      return;
    }
    renew();
    if (lost || System.nanoTime() - validUntilNanos >= 0) {
      throw new IllegalStateException(
          "this write-back engine's exclusive claim on the cache tier "
              + (lost ? "was lost" : "could not be renewed")
              + ": it may no longer change buffered writes (another engine may hold them now)");
    }
  }

  /** Gives the record up (the exclusive holder deletes it; shared holders let it lapse). */
  @Override
  public void close() {
    renewer.shutdownNow();
    if (!exclusive || lost) {
      return;
    }
    for (ServerAddress server : servers) {
      try {
        Optional<CacheValue> current = cache.getOn(server, KEY);
        if (current.isPresent() && ownValue(current.get())) {
          cache.deleteOn(server, KEY);
        }
      } catch (IqException e) {
        LOG.debug("could not give up the claim on {}: {}", server, e.toString());
      }
    }
  }

  /** One attempt on every replica server; returns who holds the record against us, or null when taken. */
  private String tryTake() {
    long sentAt = System.nanoTime();
    List<ServerAddress> added = new ArrayList<>();
    int reachable = 0;
    for (ServerAddress server : servers) {
      String holder;
      try {
        if (cache.addOn(server, KEY, value, options(lifetime)) == Outcome.OK) {
          added.add(server);
          reachable++;
          continue;
        }
        holder =
            cache
                .getOn(server, KEY)
                .map(current -> new String(current.data(), StandardCharsets.UTF_8))
                .orElse("(a record that lapsed just now)");
        reachable++;
      } catch (IqConnectionException down) {
        // A server that is down holds no record another engine could be refused by: the reachable
        // replicas decide, as they do for the buffered writes themselves.
        continue;
      }
      if (!exclusive && holder.equals(SHARED)) {
        continue; // shared with the engines that hold it; renewals keep it
      }
      for (ServerAddress undo : added) {
        cache.deleteOn(undo, KEY); // just added by this engine: nobody else's
      }
      return holder;
    }
    if (reachable == 0) {
      return "(no replica server of the record answers)";
    }
    validUntilNanos = sentAt + (long) (lifetime.toNanos() * 0.8);
    return null;
  }

  /**
   * Re-stores the record with a full lifetime on every reachable replica; for the exclusive holder, only where it is
   * still its own. Renewed when at least one replica confirmed it and none showed another holder.
   */
  private synchronized void renew() {
    if (lost) {
      return;
    }
    long sentAt = System.nanoTime();
    int confirmed = 0;
    for (ServerAddress server : servers) {
      try {
        Optional<CacheValue> current = cache.getOn(server, KEY);
        if (current.isEmpty()) {
          // Its server restarted empty (or the record lapsed while this process was paused): take
          // it again there; if another engine got in meanwhile the add fails and the record is
          // lost.
          if (cache.addOn(server, KEY, value, options(lifetime)) == Outcome.OK) {
            confirmed++;
          } else if (exclusive) {
            lost = true;
            return;
          }
        } else if (exclusive && !ownValue(current.get())) {
          lost = true;
          LOG.warn("write-back's exclusive claim on {} is held by another engine now", server);
          return;
        } else if (cache.casOn(
                server, KEY, current.get().data(), current.get().cas(), options(lifetime))
            == Outcome.OK) {
          confirmed++;
        }
      } catch (IqException e) {
        LOG.debug("could not renew write-back's claim on {}: {}", server, e.toString());
      }
    }
    if (confirmed > 0) {
      validUntilNanos = sentAt + (long) (lifetime.toNanos() * 0.8);
    }
  }

  private boolean ownValue(CacheValue current) {
    return java.util.Arrays.equals(current.data(), value);
  }

  /** A name for this engine's record that no other engine, here or in another process, has: pid, host, nonce. */
  public static String holderName() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      host = "unknown-host";
    }
    return ProcessHandle.current().pid()
        + "@"
        + host
        + "#"
        + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong());
  }

  private static WriteOptions options(Duration ttl) {
    return WriteOptions.PINNED.withTtl(ttl);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the write-back claim", e);
    }
  }
}
