package io.dendrite.coordination;

import io.dendrite.core.DendriteMetrics;
import io.dendrite.core.RangeCache;
import java.util.HashSet;
import java.util.Set;

/**
 * The counts of the ranges' Dendrites one process serves now and served before, added up: a range's Dendrite counts
 * live while the process serves it, and its last counts stay in the total once it is given up, so a counter built on
 * the total never goes back when a range moves (only its holdings leave). Thread-safe.
 */
final class RangeCounts {
  private final Set<RangeCache<?, ?>> serving = new HashSet<>();

  /** The ranges given up, added up; null until one is. */
  private DendriteMetrics givenUp;

  synchronized void serving(RangeCache<?, ?> range) {
    serving.add(range);
  }

  /** Called once the range's Dendrite has done its last operation: its counts are final. */
  synchronized void gaveUp(RangeCache<?, ?> range) {
    if (serving.remove(range)) {
      givenUp = plus(givenUp, range.metrics().withNothingHeld());
    }
  }

  /** Every range's counts, added up; null when this process has served none yet. */
  synchronized DendriteMetrics total() {
    DendriteMetrics total = givenUp;
    for (RangeCache<?, ?> range : serving) {
      total = plus(total, range.metrics());
    }
    return total;
  }

  private static DendriteMetrics plus(DendriteMetrics total, DendriteMetrics more) {
    return total == null ? more : total.plus(more);
  }
}
