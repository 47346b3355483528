package io.dendrite.writeback.cyclecontrol.below;

import io.dendrite.writeback.cyclecontrol.above.Above;

/** The other half: uses the package above it, as the root package once used the engines that used it. */
public final class Below {
  private Below() {}

  /** Uses the package above, closing the cycle. */
  public static int depth() {
    return Above.class.getSimpleName().isEmpty() ? 1 : 0;
  }
}
