package io.dendrite.core;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import java.util.List;
import java.util.Optional;

/**
 * Reads a range's cached result sets as a process that does not own the range does (the CPR paper, §3: "a hit
 * needs no owner"): the entry of exactly the asked interval, straight from the cache, without PrInT or leases. It is
 * as current as the owner's own hit, because a value present in the cache is always one the owner registered and
 * keeps current under its Q leases ({@link EntryIndex}) — a value a store left unregistered (its reply lost) is owed
 * a delete, and the owner's next fill of the interval replaces it; anything else — no such entry, an entry only a larger one
 * or points cover, an unreachable server — is a miss for the owner to serve.
 *
 * <p>Built by {@link Dendrite.Builder#buildReads()} with the settings of the owner's Dendrite, so keys and values
 * are read exactly as the owner writes them. Thread-safe.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
public final class CachedReads<K extends Comparable<? super K>, R> {
  private final DomainType<K> type;
  private final IqClient cache;
  private final CacheKeys<K> keys;
  private final CachedRows<K, R> rows;

  CachedReads(DomainType<K> type, IqClient cache, CacheKeys<K> keys, CachedRows<K, R> rows) {
    this.type = type;
    this.cache = cache;
    this.keys = keys;
    this.rows = rows;
  }

  /**
   * The rows of [{@code lowerBound}, {@code upperBound}] if the cache holds that interval's entry, ordered by the
   * attribute; empty on a miss (including an unreachable cache server).
   *
   * @throws IllegalArgumentException if a bound is null or of the wrong type, or {@code lowerBound > upperBound}
   */
  public Optional<List<R>> get(K lowerBound, K upperBound) {
    Interval<K> interval = type.interval(lowerBound, upperBound, null, null);
    String key = keys.entryKey(interval);
    Optional<CacheValue> value;
    try {
      value = cache.get(key);
    } catch (IqException unreachable) {
      return Optional.empty();
    }
    return value.map(
        found -> rows.normalize(interval, rows.rowsOf(interval, key, found.data(), count -> {})));
  }
}
