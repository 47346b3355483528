package io.dendrite.writeback;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import java.util.Arrays;
import java.util.Optional;

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
