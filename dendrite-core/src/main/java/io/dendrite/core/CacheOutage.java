package io.dendrite.core;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.ServerAddress;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Deletes a write owed to cache servers it could not reach. The rule: when a write cannot quarantine
 * an impacted entry because its server is unreachable, the entry is unregistered and its key is owed a
 * delete; no get reads from, and no fill writes to, that server until every delete it is owed has been
 * delivered. So a server that comes back with old values never serves them. (What this process owes is
 * kept in its memory: if the process dies while a server is unreachable, restart that server empty.)
 */
final class CacheOutage {
  private final IqClient cache;
  private final Map<ServerAddress, Set<String>> owedDeletes = new ConcurrentHashMap<>();

  CacheOutage(IqClient cache) {
    this.cache = cache;
  }

  /** Remembers that {@code key}'s server missed a delete. */
  void owe(String key) {
    owedDeletes.computeIfAbsent(server(key), s -> ConcurrentHashMap.newKeySet()).add(key);
  }

  /**
   * Delivers the deletes owed to the servers of {@code keys}.
   *
   * @return false if some of them are still unreachable: do not use the cache for these keys
   */
  boolean settle(Collection<String> keys, RoundTrips trips) {
    if (owedDeletes.isEmpty()) {
      return true;
    }
    for (ServerAddress server : keys.stream().map(this::server).distinct().toList()) {
      Set<String> owed = owedDeletes.get(server);
      if (owed == null) {
        continue;
      }
      try {
        for (String key : List.copyOf(owed)) {
          trips.add(1);
          cache.delete(key);
          owed.remove(key);
        }
      } catch (IqException unreachable) {
        return false;
      }
      owedDeletes.remove(server, Set.of());
    }
    return true;
  }

  private ServerAddress server(String key) {
    return cache.replicaPlacement().serversFor(key, 1).get(0);
  }
}
