package io.dendrite.core;

/**
 * How a {@link Dendrite}'s writes reach the cached result sets and the data store, chosen once when the Dendrite is
 * built: {@link WriteAround}, {@link RefreshingWrite} (write-through, or write-back with its buffer), or {@link
 * UnleasedWrite}, the negative control. The Dendrite checks the arguments and holds the interval's Exclusive lease
 * and the write's {@link io.dendrite.iq.client.Flight} around the call.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
interface WritePath<K extends Comparable<? super K>, R> {

  <C> void write(
      Interval<K> interval,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate,
      RefreshedResults<R> refreshed,
      RoundTrips trips);
}
