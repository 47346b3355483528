package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.Flight;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReplicatedStore;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.WriteOptions;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Values pinned on R distinct cache servers, so that a buffered write and the list that finds it survive the loss
 * of R-1 servers. This class only fans out; mutual exclusion is the caller's.
 *
 * <p>A server that is down (it refuses or drops connections) is tolerated: its replicas are gone with its memory,
 * and a change counts as done when every other replica shows it. A server that does not answer in time is not
 * tolerated: it may be alive and stalled, still holding an older replica that could be read again later, so the
 * change is reported as failed (it may or may not have been applied).
 */
public final class PinnedReplicas {
  private static final Logger LOG = LoggerFactory.getLogger(PinnedReplicas.class);

  private final IqClient cache;
  private final ReplicatedStore store;
  private final boolean pinned;
  private final LongAdder unpinnedRefused = new LongAdder();
  private final FirstWarnings unpinnedWarnings = new FirstWarnings(LOG, 20);

  /** Values pinned on our IQ servers. */
  public PinnedReplicas(IqClient cache, int count) {
    this(cache, count, true);
  }

  private PinnedReplicas(IqClient cache, int count, boolean pinned) {
    this.cache = cache;
    this.store = cache.replicaPlacement().store(count);
    this.pinned = pinned;
  }

  /**
   * Values kept on stock memcached, which has no pinning and no {@code mappend}: run it with {@code -M}, so that it
   * refuses a store when its memory is full ({@link Outcome#MEMORY_FULL}) instead of evicting what it holds. Logs
   * are appended with plain {@code append}s (created with {@code add}), {@code cas} rewrites carry no pinning field,
   * and stores carry one that memcached ignores.
   */
  public static PinnedReplicas unpinned(IqClient cache, int count) {
    return new PinnedReplicas(cache, count, false);
  }

  public int count() {
    return store.replicas();
  }

  /** The cache client the replicas are kept through. */
  public IqClient cache() {
    return cache;
  }

  /** The servers that hold {@code key}'s replicas, in the order every client shares. */
  public List<ServerAddress> serversFor(String key) {
    return store.serversFor(key);
  }

  /** The value from the first reachable replica that has it. */
  public Optional<byte[]> get(String key) {
    return store.get(key).filter(value -> isOurs(key, value)).map(CacheValue::data);
  }

  /**
   * Whether a value read from a replica is one of these values. On IQ servers every one is pinned; one that is not
   * was stored by someone else, e.g. a user who may not pin, under a key the server does not reserve for the pin
   * users (a forged buffered write): it is refused, counted and logged, as if absent, and never applied. Stock
   * memcached pins nothing and has no users: every value there is taken.
   */
  private boolean isOurs(String key, CacheValue value) {
    if (!pinned || value.pinned()) {
      return true;
    }
    refuseUnpinned(key);
    return false;
  }

  /** Counts and logs a value under {@code key} that is not pinned, so not an engine's; it is taken as absent. */
  public void refuseUnpinned(String key) {
    unpinnedRefused.increment();
    unpinnedWarnings.warn(
        "refused the value of {}: it is not pinned, so no write-back engine stored it (another user's set?); it is"
            + " not applied, and the next change of {} replaces it. Check the cache servers' --pin-users and"
            + " --reserved-prefixes",
        key,
        key);
  }

  /** How many values {@link #refuseUnpinned} refused since this started. */
  public long unpinnedRefused() {
    return unpinnedRefused.sum();
  }

  /**
   * Pins {@code value} on every replica.
   *
   * @return {@link Outcome#OK}, or the worst refusal, e.g. {@link Outcome#PINNED_MEMORY_FULL}; some replicas may
   *     then hold the new value and the caller must put the old one back or delete them
   * @throws IqConnectionException when a replica whose server is not down could not confirm it
   */
  public Outcome set(String key, byte[] value) {
    return setAsync(key, value).await();
  }

  /** A request fan-out already sent; {@link #await} waits for its replies and answers as the blocking form would. */
  @FunctionalInterface
  public interface Sent<T> {
    T await();
  }

  /** A flight on the cache client: what the calling thread sends until it closes goes out in one write per server. */
  public Flight flight() {
    return cache.flight();
  }

  /** {@link #set}, sent now. */
  public Sent<Outcome> setAsync(String key, byte[] value) {
    CompletableFuture<Outcome> sent = store.setAsync(key, value);
    return () -> {
      try {
        return join(sent);
      } catch (IqConnectionException unreachable) {
        confirmOnLiveReplicas(
            key, unreachable, found -> found != null && Arrays.equals(found, value));
        return Outcome.OK;
      }
    };
  }

  /** {@link #append}, sent now. */
  public Sent<Outcome> appendAsync(String key, List<String> lines) {
    if (!pinned) {
      return appendEachAsync(key, lines);
    }
    List<byte[]> values =
        lines.stream().map(line -> (line + "\n").getBytes(StandardCharsets.UTF_8)).toList();
    CompletableFuture<Outcome> sent = store.appendAsync(key, values);
    return () -> {
      try {
        return join(sent);
      } catch (IqConnectionException unreachable) {
        confirmOnLiveReplicas(
            key,
            unreachable,
            found -> found != null && PinnedLines.lines(found).containsAll(lines));
        return Outcome.OK;
      }
    };
  }

  /**
   * {@link #append} on stock memcached: the lines in one plain {@code append} per replica (all of them or none reach
   * a replica), and where one answers {@code NOT_STORED}, {@link #appendOrAddOn}.
   */
  private Sent<Outcome> appendEachAsync(String key, List<String> lines) {
    byte[] block = linesOf(lines);
    Map<ServerAddress, CompletableFuture<Outcome>> sent = new LinkedHashMap<>();
    store
        .serversFor(key)
        .forEach(server -> sent.put(server, cache.servers().appendOnAsync(server, key, block)));
    return () -> {
      Outcome worst = Outcome.OK;
      IqConnectionException unreachable = null;
      for (Map.Entry<ServerAddress, CompletableFuture<Outcome>> replica : sent.entrySet()) {
        try {
          Outcome appended = join(replica.getValue());
          worst =
              worst.worst(
                  appended == Outcome.NOT_STORED
                      ? appendOrAddOn(replica.getKey(), key, block)
                      : appended);
        } catch (IqConnectionException failed) {
          unreachable = unreachable == null ? failed : unreachable;
        }
      }
      if (unreachable != null) {
        confirmOnLiveReplicas(
            key,
            unreachable,
            found -> found != null && PinnedLines.lines(found).containsAll(lines));
      }
      return worst;
    };
  }

  /**
   * After a plain {@code append} answered {@code NOT_STORED}, which on stock memcached means the log is absent
   * <em>or</em> there was no memory for the longer value: creates the log with {@code add}, and if it is present
   * after all, appends once more. Logs are never deleted (a rewrite is a {@code cas}), so a second {@code
   * NOT_STORED} while the log is present is memory that ran out.
   */
  private Outcome appendOrAddOn(ServerAddress server, String key, byte[] block) {
    Outcome added = cache.servers().addOn(server, key, block, WriteOptions.DEFAULT);
    if (added != Outcome.NOT_STORED) {
      return added;
    }
    Outcome appended = join(cache.servers().appendOnAsync(server, key, block));
    return appended == Outcome.NOT_STORED ? Outcome.MEMORY_FULL : appended;
  }

  private static byte[] linesOf(Collection<String> lines) {
    StringBuilder joined = new StringBuilder();
    lines.forEach(line -> joined.append(line).append('\n'));
    return joined.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** {@link #getAll}, sent now. */
  public Sent<Map<String, byte[]>> getAllAsync(Collection<String> keys) {
    CompletableFuture<Map<String, Map<ServerAddress, CacheValue>>> sent =
        store.getAllOnEachAsync(keys);
    return () -> {
      Map<String, byte[]> values = new HashMap<>();
      join(sent)
          .forEach(
              (key, copies) ->
                  copies.values().stream()
                      .filter(value -> isOurs(key, value))
                      .findFirst()
                      .ifPresent(value -> values.put(key, value.data())));
      return values;
    };
  }

  /** The reply, its failure unwrapped: a replica that could not be reached is an {@link IqConnectionException}. */
  private static <T> T join(CompletableFuture<T> sent) {
    try {
      return sent.join();
    } catch (CompletionException failed) {
      throw failed.getCause() instanceof IqException iq ? iq : failed;
    }
  }

  /** The values of those of {@code keys} that have one, each from its first reachable replica that has it. */
  public Map<String, byte[]> getAll(Collection<String> keys) {
    return getAllAsync(keys).await();
  }

  /** Every reachable replica of each of {@code keys}, by server, for values that are merged across replicas. */
  public Map<String, Map<ServerAddress, CacheValue>> getAllOnEach(Collection<String> keys) {
    return store.getAllOnEach(keys);
  }

  /** Rewrites the replica on {@code server} unless it changed since {@code cas} was read there. */
  public Outcome casOn(ServerAddress server, String key, byte[] value, long cas) {
    // Stock memcached would read a pinning field as the CAS unique.
    return cache
        .servers()
        .casOn(server, key, value, cas, pinned ? WriteOptions.PINNED : WriteOptions.DEFAULT);
  }

  /**
   * Appends {@code lines}, each unique, to every replica (pinned, creating it where absent); appends may run
   * concurrently, so replicas can hold lines in different orders.
   *
   * @return {@link Outcome#OK}, or the worst refusal, e.g. {@link Outcome#PINNED_MEMORY_FULL}
   * @throws IqConnectionException when a replica whose server is not down could not confirm it
   */
  public Outcome append(String key, List<String> lines) {
    return appendAsync(key, lines).await();
  }

  /**
   * Those of {@code keys} that some replica holds and some replica on a server that is not down lacks (one batched
   * read of every replica): values whose copies a restarted server lost.
   */
  public List<String> lackingACopy(Collection<String> keys) {
    Map<String, Map<ServerAddress, CacheValue>> copies = getAllOnEach(keys);
    Map<ServerAddress, Boolean> down = new HashMap<>();
    return keys.stream()
        .filter(copies::containsKey)
        .filter(
            key ->
                store.serversFor(key).stream()
                    .anyMatch(
                        server ->
                            !copies.get(key).containsKey(server)
                                && !down.computeIfAbsent(server, cache.servers()::isDown)))
        .toList();
  }

  /**
   * Restores logs whose replicas are read merged (lines unique, only ever appended, a line's meaning independent of
   * its position): each replica of each of {@code keys} gets the lines another replica holds and it lacks, appended
   * to it alone. That is what a replica on a server that restarted empty, or missed appends, lacks. Safe alongside
   * other appends and per-replica {@code cas} rewrites, which a restoring append makes retry.
   *
   * @return how many replicas were appended to
   * @throws IqConnectionException when a replica whose server is not down could not be reached
   * @throws IqException when a replica refused the lines (e.g. its pinned memory is full)
   */
  public int restoreLines(Collection<String> keys) {
    int restored = 0;
    Map<String, Map<ServerAddress, CacheValue>> logs = new LinkedHashMap<>(getAllOnEach(keys));
    // A log whose own servers were all taken out of placement at once has its only lines there.
    Map<String, Map<ServerAddress, Optional<CacheValue>>> former =
        readEach(formerServersOf(keys), false);
    former.forEach(
        (key, copies) ->
            copies.forEach(
                (server, copy) ->
                    copy.ifPresent(
                        value ->
                            logs.computeIfAbsent(key, k -> new LinkedHashMap<>())
                                .putIfAbsent(server, value))));
    for (Map.Entry<String, Map<ServerAddress, CacheValue>> log : logs.entrySet()) {
      Set<String> all = new LinkedHashSet<>();
      log.getValue().values().forEach(copy -> all.addAll(PinnedLines.lines(copy.data())));
      for (ServerAddress server : store.serversFor(log.getKey())) {
        Set<String> missing = new LinkedHashSet<>(all);
        CacheValue copy = log.getValue().get(server);
        if (copy != null) {
          PinnedLines.lines(copy.data()).forEach(missing::remove);
        }
        if (missing.isEmpty()) {
          continue;
        }
        List<byte[]> lines =
            missing.stream().map(line -> (line + "\n").getBytes(StandardCharsets.UTF_8)).toList();
        Outcome outcome;
        try {
          outcome =
              pinned
                  ? cache.servers().appendOn(server, log.getKey(), lines)
                  : appendOrAddOn(server, log.getKey(), linesOf(missing));
        } catch (IqConnectionException unreachable) {
          if (unreachable.timedOut() || !cache.servers().isDown(server)) {
            throw unreachable;
          }
          continue; // down: nothing to restore there until it answers again
        }
        if (!outcome.isOk()) {
          throw new IqException(
              "could not restore " + log.getKey() + " on " + server + ": " + outcome);
        }
        restored++;
      }
    }
    return restored;
  }

  /**
   * After a fan-out that failed on some replica: returns when every replica whose server is not down shows the
   * effect (at least one must), and throws {@code failure} otherwise, also when a server only timed out.
   */
  private void confirmOnLiveReplicas(
      String key, IqConnectionException failure, Predicate<byte[]> showsEffect) {
    if (failure.timedOut()) {
      throw failure;
    }
    Map<ServerAddress, CacheValue> found =
        store.getAllOnEach(List.of(key)).getOrDefault(key, Map.of());
    int confirmed = 0;
    for (ServerAddress server : store.serversFor(key)) {
      CacheValue replica = found.get(server);
      if (showsEffect.test(replica == null ? null : replica.data())) {
        confirmed++;
      } else if (!cache.servers().isDown(server)) {
        throw failure;
      }
    }
    if (confirmed == 0 && !showsEffect.test(null)) {
      throw failure;
    }
  }

  /**
   * The copies that the servers of their former placement ({@link ReplicatedStore#formerServersFor}) hold of those
   * of {@code keys} that placement holds none of: when every one of a key's own servers was taken out of placement
   * at once (all cut off by the network, back as the same runs), those copies are its only ones, and a reader that
   * took placement's lack of a copy for "nothing buffered" would lose them. Only keys with former servers are read
   * (none while a key's own server is in placement, the usual case). A former server that is down is passed over, as
   * a down replica is: its copies are taken as gone with it.
   *
   * @return per key that a former server holds, the first such server's copy
   * @throws IqConnectionException when a former server that is not down did not answer
   */
  public Map<String, byte[]> formerCopies(Collection<String> keys) {
    Map<String, byte[]> found = new HashMap<>();
    readEach(formerServersOf(keys), false)
        .forEach(
            (key, copies) ->
                copies.values().stream()
                    .flatMap(Optional::stream)
                    .findFirst()
                    .ifPresent(copy -> found.put(key, copy.data())));
    return found;
  }

  /**
   * Deletes the copies that the former servers of {@code keys} hold (see {@link #formerCopies}), once their value
   * is in placement or drained: left there, a later reader finding placement without a copy would take it up again.
   * A former server that cannot be reached keeps its copy (logged).
   */
  public void deleteFormerCopies(Collection<String> keys) {
    formerServersOf(keys)
        .forEach(
            (key, servers) ->
                servers.forEach(
                    server -> {
                      try {
                        cache.servers().deleteOn(server, key);
                      } catch (IqConnectionException unreachable) {
                        LOG.warn(
                            "could not delete the copy of {} on {}, out of its placement: {}",
                            key,
                            server,
                            unreachable.toString());
                      }
                    }));
  }

  /**
   * Those of {@code keys} that are provably not held anywhere: some server of their placement answered that it holds
   * no copy, and every former server ({@link #formerCopies}) that is not down answered the same. A key none of
   * whose servers answered (all of them cut off, say) is not among them: its only copies may be there.
   */
  public Set<String> provablyAbsent(Collection<String> keys) {
    Map<String, List<ServerAddress>> servers = new LinkedHashMap<>();
    Map<String, List<ServerAddress>> former = formerServersOf(keys);
    for (String key : keys) {
      servers.put(key, store.serversFor(key));
    }
    Map<String, Map<ServerAddress, Optional<CacheValue>>> inPlacement = readEach(servers, true);
    Map<String, Map<ServerAddress, Optional<CacheValue>>> outOfPlacement;
    try {
      outOfPlacement = readEach(former, false);
    } catch (IqConnectionException unanswered) {
      return Set.of();
    }
    Set<String> absent = new LinkedHashSet<>();
    for (String key : keys) {
      Map<ServerAddress, Optional<CacheValue>> answered = inPlacement.getOrDefault(key, Map.of());
      Map<ServerAddress, Optional<CacheValue>> answeredOut =
          outOfPlacement.getOrDefault(key, Map.of());
      if (!answered.isEmpty()
          && answered.values().stream().allMatch(Optional::isEmpty)
          && answeredOut.values().stream().allMatch(Optional::isEmpty)) {
        absent.add(key);
      }
    }
    return absent;
  }

  private Map<String, List<ServerAddress>> formerServersOf(Collection<String> keys) {
    Map<String, List<ServerAddress>> former = new LinkedHashMap<>();
    for (String key : keys) {
      List<ServerAddress> servers = store.formerServersFor(key);
      if (!servers.isEmpty()) {
        former.put(key, servers);
      }
    }
    return former;
  }

  /**
   * Reads each key from each of its given servers, all in flight at once: per key, the answer of each server that
   * answered. A server that is down is left out; one that did not answer in time is left out too with {@code
   * leaveOutUnanswered}, and fails the read otherwise.
   */
  private Map<String, Map<ServerAddress, Optional<CacheValue>>> readEach(
      Map<String, List<ServerAddress>> serversOf, boolean leaveOutUnanswered) {
    Map<String, Map<ServerAddress, CompletableFuture<Optional<CacheValue>>>> sent =
        new LinkedHashMap<>();
    serversOf.forEach(
        (key, servers) -> {
          Map<ServerAddress, CompletableFuture<Optional<CacheValue>>> reads = new LinkedHashMap<>();
          servers.forEach(server -> reads.put(server, cache.servers().getOnAsync(server, key)));
          sent.put(key, reads);
        });
    Map<String, Map<ServerAddress, Optional<CacheValue>>> answers = new LinkedHashMap<>();
    IqConnectionException unanswered = null;
    for (Map.Entry<String, Map<ServerAddress, CompletableFuture<Optional<CacheValue>>>> key :
        sent.entrySet()) {
      Map<ServerAddress, Optional<CacheValue>> answered = new LinkedHashMap<>();
      for (Map.Entry<ServerAddress, CompletableFuture<Optional<CacheValue>>> read :
          key.getValue().entrySet()) {
        try {
          answered.put(read.getKey(), join(read.getValue()));
        } catch (IqConnectionException failed) {
          if (!leaveOutUnanswered
              && (failed.timedOut() || !cache.servers().isDown(read.getKey()))) {
            unanswered = unanswered == null ? failed : unanswered;
          }
        }
      }
      answers.put(key.getKey(), answered);
    }
    if (unanswered != null) {
      throw unanswered;
    }
    return answers;
  }

  /** Deletes every replica of every key, all in flight at once. */
  public void deleteAll(Collection<String> keys) {
    List<CompletableFuture<Outcome>> pending =
        keys.stream().map(key -> store.deleteAsync(key)).toList();
    Iterator<String> names = keys.iterator();
    for (CompletableFuture<Outcome> deleted : pending) {
      String key = names.next();
      Outcome outcome;
      try {
        outcome = deleted.join();
      } catch (CompletionException failed) {
        delete(key); // the one-key path, which tolerates a lost replica
        continue;
      }
      if (outcome != Outcome.OK && outcome != Outcome.NOT_FOUND) {
        throw new IqException("could not delete " + key + ": " + outcome);
      }
    }
  }

  /** Deletes every replica; a replica whose server is down is gone already. */
  public void delete(String key) {
    Outcome outcome;
    try {
      outcome = store.delete(key);
    } catch (IqConnectionException unreachable) {
      confirmOnLiveReplicas(key, unreachable, Objects::isNull);
      return;
    }
    if (outcome != Outcome.OK && outcome != Outcome.NOT_FOUND) {
      throw new IqException("could not delete " + key + ": " + outcome);
    }
  }
}
