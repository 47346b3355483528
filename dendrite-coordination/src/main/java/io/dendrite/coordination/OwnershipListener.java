package io.dendrite.coordination;

/**
 * What a process does when it gains or loses a range. Both run on the coordinator's own thread, one at a time.
 */
public interface OwnershipListener {

  /**
   * This process owns {@code range} from now on, under {@code epoch}: the previous owner has stopped serving it (it
   * released the range, or its session ended). Rebuild what the range needs before returning; the range counts as
   * served only from then.
   */
  void gained(String range, long epoch);

  /**
   * {@link #gained(String, long)}, told whether the previous owner handed the range over ({@code handedOver}: it
   * stopped serving it and released it) or stopped without doing so (its session ended: it died, was cut off or
   * paused, possibly in the middle of a write), or the range never had an owner. The default ignores it.
   */
  default void gained(String range, long epoch, boolean handedOver) {
    gained(range, epoch);
  }

  /**
   * This process no longer owns {@code range}: it is moving to another process, this process's session is in
   * doubt, or the coordinator is closing. Stop serving it before returning; no other process takes it until then
   * (unless the session ends meanwhile, which {@link ZooKeeperOwnership#owns} already tells every request).
   */
  void lost(String range, long epoch);
}
