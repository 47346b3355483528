package io.dendrite.coordination;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A listener that remembers the latest epoch each range was gained under, for tests that only watch gains. */
final class GainedRanges implements OwnershipListener {
  final Map<String, Long> epochs = new ConcurrentHashMap<>();

  @Override
  public void gained(String range, long epoch) {
    epochs.put(range, epoch);
  }

  @Override
  public void lost(String range, long epoch) {}
}
