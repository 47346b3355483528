package io.dendrite.coordination;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A listener that remembers the latest epoch each range was gained under, and whether it was handed over then, for
 * tests that only watch gains.
 */
final class GainedRanges implements OwnershipListener {
  final Map<String, Long> epochs = new ConcurrentHashMap<>();
  final Map<String, Boolean> handedOver = new ConcurrentHashMap<>();

  @Override
  public void gained(String range, long epoch) {
    epochs.put(range, epoch);
  }

  @Override
  public void gained(String range, long epoch, boolean handedOver) {
    this.handedOver.put(range, handedOver);
    gained(range, epoch);
  }

  @Override
  public void lost(String range, long epoch) {}
}
