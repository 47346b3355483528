package io.dendrite.iq.client;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Where the R replicas of a replicated key live, and the changes of it that losing a server calls for: got from
 * {@link IqClient#replicaPlacement()}. For code that keeps values pinned on several servers so that they survive a
 * server's loss (write-back's buffered writes, claims, logs) and for the repair thread that gives them their copies
 * back; plain keys live on the ring and never move, whatever is done here.
 *
 * <p>A replicated key's replicas are the first R servers clockwise on the ring from the key, skipping the servers
 * taken out of placement ({@link #exclude}, e.g. one that has been down too long). A key whose replica server is out
 * therefore has its next server clockwise as a <em>substitute</em>, which the caller fills with a copy, so that R
 * copies exist again and a second loss is survived.
 *
 * <p>Why skipping keeps holders apart: taking a server out only removes a down server and appends the next one, so
 * the live servers of a key's placement before the change are all in its placement after it. Two holders that took
 * a key's leases under the two placements therefore meet on some live server.
 *
 * <p>Once the server is back in ({@link #include}), a substitute holds a copy outside the key's placement: a
 * <em>stray</em>. It is never read while it stays out of placement, but it would be read, stale, if the same server
 * substituted for the key again; so every server that served as a substitute is remembered with the key, and its
 * strays are deleted ({@link #deleteStrays}) once every holder that placed a copy there before the change is fenced
 * off.
 *
 * <p>Placement is this client's own: clients that disagree about it still meet on the key's live servers, because
 * taking a down server out only appends the next server to a key's placement. Thread-safe; changes of placement and
 * stray deletions are serialized on one lock.
 */
public final class ReplicaPlacement {
  private final IqClient client;
  private final HashRing ring;
  private final int serverCount;
  private volatile Set<ServerAddress> excluded = Set.of();
  private volatile long version;

  /** Per server, the keys (with their replica count) it was a substitute for, until deleted there. */
  private final Map<ServerAddress, Map<String, Integer>> substitutedFor = new ConcurrentHashMap<>();

  /** Serializes {@link #exclude}, {@link #include} and stray deletions. */
  private final Object changes = new Object();

  /** When a server was last put back into placement ({@link #include}); guarded by {@link #changes}. */
  private long lastIncludedNanos = System.nanoTime();

  /** The parties that copy pinned values off leaving servers ({@link #joinHandovers}); also their lock. */
  private final Set<HandoverParty> handoverParties = ConcurrentHashMap.newKeySet();

  ReplicaPlacement(IqClient client, HashRing ring) {
    this.client = client;
    this.ring = ring;
    this.serverCount = client.config().servers().size();
  }

  /**
   * The {@code replicas} distinct servers a replicated key lives on, in the order reads prefer them: its owner on the
   * ring, then the next distinct servers clockwise, skipping those {@linkplain #exclude taken out} (fewer when fewer
   * servers are left in placement).
   */
  public List<ServerAddress> serversFor(String key, int replicas) {
    Set<ServerAddress> out = excluded;
    return out.isEmpty() ? ring.serversFor(key, replicas) : choose(key, replicas, out, true);
  }

  /**
   * The servers {@linkplain #exclude taken out} of placement that held {@code key}'s copies before, when <em>every
   * one</em> of its own {@code replicas} servers (those it has with nobody taken out) is out, e.g. all of them were
   * cut off by the network and came back as the same runs: then no server in its placement now was ever one of its
   * replicas, and the copies that were on the servers taken out are the only ones there are (all of them cut off at
   * once: nothing could change the key meanwhile). Empty while one of its own servers is in placement: that one saw
   * every change, so its copy, or its lack of one, is the key's state.
   */
  public List<ServerAddress> formerServersFor(String key, int replicas) {
    Set<ServerAddress> out = excluded;
    if (out.isEmpty()) {
      return List.of();
    }
    List<ServerAddress> walk = ring.serversFor(key, Math.min(serverCount, replicas + out.size()));
    List<ServerAddress> own = walk.subList(0, Math.min(replicas, walk.size()));
    if (!out.containsAll(own)) {
      return List.of();
    }
    List<ServerAddress> former = new ArrayList<>();
    for (ServerAddress server : walk) {
      if (out.contains(server)) {
        former.add(server);
      }
    }
    return former;
  }

  /**
   * A view of the client that keeps each key pinned on {@code replicas} distinct servers of this placement (see
   * {@link #serversFor}), for values that must survive the loss of {@code replicas - 1} servers.
   */
  public ReplicatedStore store(int replicas) {
    return new ReplicatedStore(client, replicas);
  }

  /**
   * Takes {@code server} out of replica placement, e.g. one that has been down too long: every replicated key that
   * had a copy there gets the next server clockwise instead (see {@link #serversFor}), which the caller must fill
   * with a copy to have R copies again. Plain (unreplicated) keys stay where they are.
   *
   * @return whether it was in placement (false also when it is the last server left in)
   */
  public boolean exclude(ServerAddress server) {
    requireKnown(server);
    synchronized (changes) {
      if (excluded.contains(server) || excluded.size() + 1 >= serverCount) {
        return false;
      }
      Set<ServerAddress> next = new LinkedHashSet<>(excluded);
      next.add(server);
      excluded = Set.copyOf(next);
      version++;
      return true;
    }
  }

  /**
   * Puts {@code server} back into replica placement, e.g. once it answers again as a new, empty run; the caller
   * must restore its copies. The copies its substitutes hold meanwhile are left outside placement; {@link
   * #deleteStrays} deletes them once no holder can still be writing them.
   *
   * @return whether it was out
   */
  public boolean include(ServerAddress server) {
    requireKnown(server);
    synchronized (changes) {
      if (!excluded.contains(server)) {
        return false;
      }
      Set<ServerAddress> next = new LinkedHashSet<>(excluded);
      next.remove(server);
      excluded = Set.copyOf(next);
      version++;
      lastIncludedNanos = System.nanoTime();
      return true;
    }
  }

  /** The servers {@linkplain #exclude taken out} of replica placement. */
  public Set<ServerAddress> excluded() {
    return excluded;
  }

  /** Counts every change of replica placement: copies must be restored after each. */
  public long version() {
    return version;
  }

  /**
   * Deletes the copies that servers hold for keys they substituted for while another server was out of placement,
   * and that are outside the keys' placement now that it is back. Deletes only once every holder that may still
   * write such a copy is fenced: the server's lease lifetime ({@code stats lease_ms}) and twice the request timeout
   * after the last {@link #include}. A server that cannot be reached keeps its strays for the next call.
   *
   * @return how many copies were deleted
   */
  public int deleteStrays() {
    int deleted = 0;
    synchronized (changes) {
      for (ServerAddress server : substitutes()) {
        List<String> strays = strays(server);
        if (strays.isEmpty()) {
          continue;
        }
        try {
          long leaseMillis =
              Long.parseLong(client.servers().stats(server).getOrDefault("lease_ms", "0"));
          long fencedAt =
              lastIncludedNanos
                  + TimeUnit.MILLISECONDS.toNanos(leaseMillis)
                  + 2 * client.config().requestTimeout().toNanos();
          if (System.nanoTime() - fencedAt < 0) {
            continue;
          }
          ServerConnection connection = client.connection(server);
          List<CompletableFuture<Outcome>> sent =
              strays.stream()
                  .map(key -> connection.send(OutgoingRequest.delete(key)).thenApply(Outcome::of))
                  .toList();
          for (int i = 0; i < strays.size(); i++) {
            Outcome outcome = ServerConnection.await(sent.get(i));
            if (outcome == Outcome.OK || outcome == Outcome.NOT_FOUND) {
              forgetStray(server, strays.get(i));
              deleted += outcome == Outcome.OK ? 1 : 0;
            }
          }
        } catch (IqConnectionException unreachable) {
          // kept for the next call
        }
      }
    }
    return deleted;
  }

  /**
   * Joins the parties of this client that copy the pinned values they keep replicas of off a leaving server (one
   * per write-back engine's replica repair): the server is told {@code pmoved} ({@link HandoverParty#moved}) only
   * once every party says it has copied. Close the party to leave.
   */
  public HandoverParty joinHandovers() {
    return HandoverParty.join(handoverParties, client);
  }

  /** The first {@code replicas} servers clockwise from {@code key} that are not {@code out}; notes substitutes. */
  private List<ServerAddress> choose(
      String key, int replicas, Set<ServerAddress> out, boolean noteSubstitutes) {
    List<ServerAddress> walk = ring.serversFor(key, Math.min(serverCount, replicas + out.size()));
    List<ServerAddress> chosen = new ArrayList<>(replicas);
    for (int i = 0; i < walk.size() && chosen.size() < replicas; i++) {
      ServerAddress server = walk.get(i);
      if (out.contains(server)) {
        continue;
      }
      chosen.add(server);
      if (noteSubstitutes && i >= replicas) { // not one of the key's own R servers: a substitute
        substitutedFor.computeIfAbsent(server, s -> new ConcurrentHashMap<>()).put(key, replicas);
      }
    }
    return chosen;
  }

  /**
   * The keys that {@code server} holds, or may hold, a copy of although it is not in their placement now (it is
   * in placement itself): candidates for deletion there. Call under {@link #changes}.
   */
  private List<String> strays(ServerAddress server) {
    Map<String, Integer> keys = substitutedFor.get(server);
    if (keys == null || excluded.contains(server)) {
      return List.of();
    }
    List<String> strays = new ArrayList<>();
    Set<ServerAddress> out = excluded;
    keys.forEach(
        (key, replicas) -> {
          if (!choose(key, replicas, out, false).contains(server)) {
            strays.add(key);
          }
        });
    return strays;
  }

  /** Forgets that {@code server} may hold {@code key}: deleted there. Call under {@link #changes}. */
  private void forgetStray(ServerAddress server, String key) {
    Map<String, Integer> keys = substitutedFor.get(server);
    if (keys != null) {
      keys.remove(key);
    }
  }

  /** The servers that were a substitute for some key and may still hold a copy there. */
  private Set<ServerAddress> substitutes() {
    Set<ServerAddress> servers = new LinkedHashSet<>();
    substitutedFor.forEach(
        (server, keys) -> {
          if (!keys.isEmpty()) {
            servers.add(server);
          }
        });
    return servers;
  }

  private void requireKnown(ServerAddress server) {
    if (!client.config().servers().contains(server)) {
      throw new IllegalArgumentException(
          server + " is not one of this client's servers " + client.config().servers());
    }
  }
}
