package io.dendrite.writeback.cyclecontrol.above;

import io.dendrite.writeback.cyclecontrol.below.Below;

/** Half of the package cycle {@code WriteBackPackagesTest}'s negative control must catch: uses the package below. */
public final class Above {
  private Above() {}

  /** Uses the package below. */
  public static int depth() {
    return Below.depth() + 1;
  }
}
