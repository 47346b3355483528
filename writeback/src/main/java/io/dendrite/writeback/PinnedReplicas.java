package io.dendrite.writeback;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Values pinned on R distinct cache servers, so that a buffered write and the list that finds it survive the loss
 * of R-1 servers. Callers hold the value's {@link ExclusiveLease}; this class only fans out.
 *
 * <p>A lost server is tolerated, not repaired: when one replica cannot be reached the operation counts as done if
 * the first reachable replica (the one {@link #get} reads) shows its effect. This assumes a cache server that
 * comes back has lost its memory (a restart), which is what the IQ client's epoch check reports; one that kept a
 * stale replica through a network partition could serve it again.
 */
final class PinnedReplicas {
  private final IqClient cache;
  private final int count;

  PinnedReplicas(IqClient cache, int count) {
    this.cache = cache;
    this.count = count;
  }

  /** @throws IllegalArgumentException unless {@code count} is between 1 and the number of cache servers */
  static void checkCount(IqClient cache, int count) {
    if (count < 1 || count > cache.config().servers().size()) {
      throw new IllegalArgumentException("replicas must be between 1 and the number of cache servers, got "
          + count);
    }
  }

  int count() {
    return count;
  }

  /** The value from the first reachable replica that has it. */
  Optional<byte[]> get(String key) {
    return cache.getReplicated(key, count).map(CacheValue::data);
  }

  /**
   * Pins {@code value} on every replica.
   *
   * @return {@link Outcome#OK}, or the worst refusal, e.g. {@link Outcome#PINNED_MEMORY_FULL}; some replicas may
   *     then hold the new value and the caller must put the old one back or delete them
   */
  Outcome set(String key, byte[] value) {
    try {
      return cache.setReplicated(key, value, count);
    } catch (IqConnectionException unreachable) {
      if (get(key).filter(found -> Arrays.equals(found, value)).isPresent()) {
        return Outcome.OK;
      }
      throw unreachable;
    }
  }

  /** The values of those of {@code keys} that have one, each from its first reachable replica that has it. */
  Map<String, byte[]> getAll(Collection<String> keys) {
    Map<String, byte[]> values = new HashMap<>();
    cache.getAllReplicated(keys, count).forEach((key, value) -> values.put(key, value.data()));
    return values;
  }

  /**
   * Appends {@code lines} to every replica (pinned, creating it where absent), by the holder of the key's lock, so
   * nothing else is appended meanwhile: after a lost server the append counts when the first reachable replica
   * ends with the appended lines.
   *
   * @return {@link Outcome#OK}, or the worst refusal, e.g. {@link Outcome#PINNED_MEMORY_FULL}
   */
  Outcome append(String key, List<String> lines) {
    List<byte[]> values = lines.stream().map(line -> (line + "\n").getBytes(StandardCharsets.UTF_8)).toList();
    try {
      return cache.appendReplicated(key, values, count);
    } catch (IqConnectionException unreachable) {
      String appended = String.join("\n", lines) + "\n";
      if (get(key).filter(found -> new String(found, StandardCharsets.UTF_8).endsWith(appended)).isPresent()) {
        return Outcome.OK;
      }
      throw unreachable;
    }
  }

  /** Deletes every replica of every key, all in flight at once. */
  void deleteAll(Collection<String> keys) {
    List<CompletableFuture<Outcome>> pending = keys.stream()
        .map(key -> cache.deleteReplicatedAsync(key, count)).toList();
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

  /** Deletes every replica. */
  void delete(String key) {
    Outcome outcome;
    try {
      outcome = cache.deleteReplicated(key, count);
    } catch (IqConnectionException unreachable) {
      if (get(key).isEmpty()) {
        return;
      }
      throw unreachable;
    }
    if (outcome != Outcome.OK && outcome != Outcome.NOT_FOUND) {
      throw new IqException("could not delete " + key + ": " + outcome);
    }
  }
}
