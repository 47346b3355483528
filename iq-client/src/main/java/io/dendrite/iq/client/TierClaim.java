package io.dendrite.iq.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A record in the cache tier that says who may act on something every process of the tier shares (a range's cached
 * results, write-back's buffered writes): kept pinned on a few replica servers under one key, with a lifetime its
 * holders renew in the background. An <em>exclusive</em> holder must be the only one: its record names it uniquely
 * ({@link #holderName}), and any other taker, exclusive or shared, is refused. <em>Shared</em> holders write the
 * same value and run together, but not beside an exclusive one.
 *
 * <p>The exclusive holder counts itself holder only until the moment its last answered renewal was sent plus 80% of
 * the lifetime ({@link #check}): the servers cannot drop the record, and so cannot let another holder in, before
 * that. A holder that was paused past it refuses its next action until a renewal shows the record is still its own.
 * A crashed holder's successor waits for the record to lapse, at most one lifetime; a live one is refused at once
 * when it is in this JVM, and as soon as its record is seen renewed when it is elsewhere.
 */
public final class TierClaim implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TierClaim.class);

  /** The values of the exclusive records held in this JVM now: a taker that meets one is refused at once. */
  private static final Set<String> HELD_HERE = ConcurrentHashMap.newKeySet();

  /** Reads and writes the record on each of its servers in turn. */
  private final ServerCommands commands;

  private final List<ServerAddress> servers;
  private final String key;
  private final String valueText;
  private final byte[] value;
  private final boolean exclusive;
  private final Duration lifetime;
  private final ScheduledExecutorService renewer;
  private volatile long validUntilNanos;
  private volatile boolean lost;
  private volatile boolean closed;

  private TierClaim(
      IqClient cache,
      int replicas,
      String key,
      String value,
      boolean exclusive,
      Duration lifetime) {
    this.commands = cache.servers();
    this.servers =
        cache
            .replicaPlacement()
            .serversFor(key, Math.min(replicas, cache.config().servers().size()));
    this.key = key;
    this.valueText = value;
    this.value = value.getBytes(StandardCharsets.UTF_8);
    this.exclusive = exclusive;
    this.lifetime = lifetime;
    this.renewer =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "dendrite-claim " + key);
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * Takes {@code key}'s record for this holder alone. Waits up to one {@code lifetime} for a record left by a
   * crashed holder to lapse; refuses at once a record held in this JVM or seen renewed meanwhile.
   *
   * @param holder the record's value: unique to this holder ({@link #holderName} makes one)
   * @param refusal the message of the refusal, given the value of the record that stands in the way
   * @throws IllegalStateException with {@code refusal}'s message when the record is held by another
   */
  public static TierClaim exclusive(
      IqClient cache,
      int replicas,
      String key,
      String holder,
      Duration lifetime,
      Function<String, String> refusal) {
    return take(new TierClaim(cache, replicas, key, holder, true, lifetime), refusal);
  }

  /**
   * Joins {@code key}'s record with every other holder of value {@code shared}: any number may run together, but not
   * beside an exclusive holder.
   *
   * @throws IllegalStateException with {@code refusal}'s message when an exclusive holder keeps the record
   */
  public static TierClaim shared(
      IqClient cache,
      int replicas,
      String key,
      String shared,
      Duration lifetime,
      Function<String, String> refusal) {
    return take(new TierClaim(cache, replicas, key, shared, false, lifetime), refusal);
  }

  private static TierClaim take(TierClaim claim, Function<String, String> refusal) {
    if (claim.lifetime.toSeconds() < 2) {
      throw new IllegalArgumentException(
          "a claim's lifetime must be at least 2 s, got " + claim.lifetime);
    }
    long deadline = System.nanoTime() + claim.lifetime.toNanos() + TimeUnit.SECONDS.toNanos(2);
    Map<ServerAddress, Long> seen = new HashMap<>();
    Refusal against;
    while ((against = claim.tryTake()) != null) {
      Long before = seen.putIfAbsent(against.server(), against.cas());
      boolean alive =
          HELD_HERE.contains(against.holder())
              || (before != null && before != against.cas() && against.cas() != 0);
      if (alive || System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(refusal.apply(against.holder()));
      }
      sleep(200);
    }
    if (claim.exclusive) {
      HELD_HERE.add(claim.valueText);
    }
    long beat = Math.max(200, claim.lifetime.toMillis() / 4);
    claim.renewer.scheduleWithFixedDelay(claim::renew, beat, beat, TimeUnit.MILLISECONDS);
    return claim;
  }

  /**
   * Whether the holder may still act: for the exclusive holder, whether the record is surely still its own (renewing
   * it now if the last renewal is too old).
   *
   * @param claimName names the claim in the refusal, e.g. "this engine's exclusive claim on the cache tier"
   * @throws IllegalStateException when it is not, or cannot be shown to be: nothing may be changed then
   */
  public void check(String claimName) {
    if (!exclusive || System.nanoTime() - validUntilNanos < 0) {
      return;
    }
    renew();
    if (lost || closed || System.nanoTime() - validUntilNanos >= 0) {
      throw new IllegalStateException(
          claimName
              + (closed ? " was given up" : lost ? " was lost" : " could not be renewed")
              + " (record "
              + key
              + "; another holder may act now): nothing more may be changed through it");
    }
  }

  /** The servers that hold the record. */
  public List<ServerAddress> servers() {
    return servers;
  }

  /** Gives the record up (the exclusive holder deletes it; shared holders let it lapse). */
  @Override
  public void close() {
    closed = true;
    renewer.shutdownNow();
    if (!exclusive) {
      return;
    }
    HELD_HERE.remove(valueText);
    if (lost) {
      return;
    }
    for (ServerAddress server : servers) {
      try {
        Optional<CacheValue> current = commands.getOn(server, key);
        if (current.isPresent() && ownValue(current.get())) {
          commands.deleteOn(server, key);
        }
      } catch (IqException e) {
        LOG.debug("could not give up {} on {}: {}", key, server, e.toString());
      }
    }
  }

  /** Who holds the record against a taker, on which server, at which version. */
  private record Refusal(String holder, ServerAddress server, long cas) {}

  /** One attempt on every replica server; returns who holds the record against us, or null when taken. */
  private Refusal tryTake() {
    long sentAt = System.nanoTime();
    List<ServerAddress> added = new ArrayList<>();
    int reachable = 0;
    for (ServerAddress server : servers) {
      Refusal against;
      try {
        if (commands.addOn(server, key, value, options()) == Outcome.OK) {
          added.add(server);
          reachable++;
          continue;
        }
        against =
            commands
                .getOn(server, key)
                .map(
                    current ->
                        new Refusal(
                            new String(current.data(), StandardCharsets.UTF_8),
                            server,
                            current.cas()))
                .orElse(new Refusal("(a record that lapsed just now)", server, 0));
        reachable++;
      } catch (IqConnectionException down) {
        // A server that is down holds no record another holder could be refused by: the reachable
        // replicas decide.
        continue;
      }
      if (!exclusive && against.holder().equals(valueText)) {
        continue; // shared with the holders that hold it; renewals keep it
      }
      for (ServerAddress undo : added) {
        commands.deleteOn(undo, key); // just added by this taker: nobody else's
      }
      return against;
    }
    if (reachable == 0) {
      return new Refusal("(no replica server of " + key + " answers)", null, 0);
    }
    validUntilNanos = sentAt + (long) (lifetime.toNanos() * 0.8);
    return null;
  }

  /**
   * Re-stores the record with a full lifetime on every reachable replica; for the exclusive holder, only where it is
   * still its own. Renewed when at least one replica confirmed it and none showed another holder.
   */
  private synchronized void renew() {
    if (lost || closed) {
      return;
    }
    long sentAt = System.nanoTime();
    int confirmed = 0;
    for (ServerAddress server : servers) {
      try {
        Optional<CacheValue> current = commands.getOn(server, key);
        if (current.isEmpty()) {
          // Its server restarted empty (or the record lapsed while this process was paused): take
          // it again there; if another holder got in meanwhile the add fails and the record is
          // lost.
          if (commands.addOn(server, key, value, options()) == Outcome.OK) {
            confirmed++;
          } else if (exclusive) {
            lost = true;
            return;
          }
        } else if (!ownValue(current.get())) {
          if (exclusive) {
            lost = true;
            LOG.warn("the exclusive claim {} on {} is held by another now", key, server);
            return;
          }
        } else if (commands.casOn(server, key, current.get().data(), current.get().cas(), options())
            == Outcome.OK) {
          confirmed++;
        }
      } catch (IqException e) {
        LOG.debug("could not renew {} on {}: {}", key, server, e.toString());
      }
    }
    if (confirmed > 0) {
      validUntilNanos = sentAt + (long) (lifetime.toNanos() * 0.8);
    }
  }

  private boolean ownValue(CacheValue current) {
    return Arrays.equals(current.data(), value);
  }

  private WriteOptions options() {
    return WriteOptions.PINNED.withTtl(lifetime);
  }

  /** A name no other holder, here or in another process, has: pid, host, nonce. */
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
        + Long.toHexString(ThreadLocalRandom.current().nextLong());
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a claim in the cache tier", e);
    }
  }
}
