package io.dendrite.core;

import java.util.List;

/**
 * Computes a range predicate's result set from the data store on a cache miss.
 *
 * @param <K> the range attribute's type
 * @param <R> the row type
 */
@FunctionalInterface
public interface RangeQuery<K, R> {

  /**
   * Returns every row whose attribute lies in [{@code lowerBound}, {@code upperBound}] (both inclusive).
   * Rows outside the interval are dropped by Dendrite.
   */
  List<R> query(K lowerBound, K upperBound) throws Exception;
}
