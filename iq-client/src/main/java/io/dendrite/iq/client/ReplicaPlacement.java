package io.dendrite.iq.client;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where the R replicas of a replicated key live: the first R servers clockwise on the ring from the key, skipping
 * the servers taken out of placement ({@link #exclude}, e.g. one that has been down too long). A key whose replica
 * server is out therefore has its next server clockwise as a <em>substitute</em>, which the caller fills with a copy,
 * so that R copies exist again and a second loss is survived.
 *
 * <p>Why skipping keeps holders apart: taking a server out only removes a down server and appends the next one, so
 * the live servers of a key's placement before the change are all in its placement after it. Two holders that took
 * a key's leases under the two placements therefore meet on some live server.
 *
 * <p>Once the server is back in ({@link #include}), a substitute holds a copy outside the key's placement: a
 * <em>stray</em>. It is never read while it stays out of placement, but it would be read, stale, if the same server
 * substituted for the key again; so every server that served as a substitute is remembered with the key, and its
 * strays are deleted ({@link #strays}) once every holder that placed a copy there before the change is fenced off.
 * Thread-safe; changes of placement and stray deletions are serialized by the caller on {@link #changes}.
 */
final class ReplicaPlacement {
  private final HashRing ring;
  private final int serverCount;
  private volatile Set<ServerAddress> excluded = Set.of();
  private volatile long version;

  /** Per server, the keys (with their replica count) it was a substitute for, until deleted there. */
  private final Map<ServerAddress, Map<String, Integer>> substitutedFor = new ConcurrentHashMap<>();

  /** Serializes {@link #exclude}, {@link #include} and stray deletions. */
  final Object changes = new Object();

  ReplicaPlacement(HashRing ring, int serverCount) {
    this.ring = ring;
    this.serverCount = serverCount;
  }

  /**
   * The servers of {@code key}'s {@code replicas} copies, in the order reads prefer them: fewer when fewer servers
   * are in placement.
   */
  List<ServerAddress> serversFor(String key, int replicas) {
    Set<ServerAddress> out = excluded;
    return out.isEmpty() ? ring.serversFor(key, replicas) : choose(key, replicas, out, true);
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
   * The servers taken out of placement that held {@code key}'s copies before, when <em>every one</em> of the key's
   * own {@code replicas} servers (those it has with nobody taken out) is out: then no server in its placement now was
   * ever one of its replicas, and the copies that were on the servers taken out are the only ones there are (all of
   * them cut off at once: nothing could change the key meanwhile). Empty while one of its own servers is in
   * placement: that one saw every change, so its copy, or its lack of one, is the key's state.
   */
  List<ServerAddress> formerServersFor(String key, int replicas) {
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

  /** Takes {@code server} out; returns false if it was out already or is the last one in. */
  boolean exclude(ServerAddress server) {
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

  /** Puts {@code server} back; returns false if it was not out. */
  boolean include(ServerAddress server) {
    synchronized (changes) {
      if (!excluded.contains(server)) {
        return false;
      }
      Set<ServerAddress> next = new LinkedHashSet<>(excluded);
      next.remove(server);
      excluded = Set.copyOf(next);
      version++;
      return true;
    }
  }

  Set<ServerAddress> excluded() {
    return excluded;
  }

  /** Counts the changes of placement, so that a watcher can tell that copies must be restored. */
  long version() {
    return version;
  }

  /**
   * The keys that {@code server} holds, or may hold, a copy of although it is not in their placement now (it is
   * in placement itself): candidates for deletion there. Call under {@link #changes}.
   */
  List<String> strays(ServerAddress server) {
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
  void deleted(ServerAddress server, String key) {
    Map<String, Integer> keys = substitutedFor.get(server);
    if (keys != null) {
      keys.remove(key);
    }
  }

  /** The servers that were a substitute for some key and may still hold a copy there. */
  Set<ServerAddress> substitutes() {
    Set<ServerAddress> servers = new LinkedHashSet<>();
    substitutedFor.forEach(
        (server, keys) -> {
          if (!keys.isEmpty()) {
            servers.add(server);
          }
        });
    return servers;
  }
}
