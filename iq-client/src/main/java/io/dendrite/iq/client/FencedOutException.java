package io.dendrite.iq.client;

/**
 * A request sent under a {@link FenceScope} did not run: the server's fence stands at another epoch than the
 * scope's (a new owner of the range raised it, or the server restarted empty and has none yet: {@link #fenceEpoch()}
 * {@code 0}). The sender must stop acting as the range's owner, or raise the fence again if it still is.
 */
public final class FencedOutException extends IqException {
  private final long fenceEpoch;

  FencedOutException(String server, String fence, long scopeEpoch, long fenceEpoch) {
    super(
        "request to "
            + server
            + " fenced out: fence "
            + fence
            + " stands at "
            + fenceEpoch
            + ", not at this sender's epoch "
            + scopeEpoch);
    this.fenceEpoch = fenceEpoch;
  }

  /** The fence's epoch at the server ({@code 0}: none there). */
  public long fenceEpoch() {
    return fenceEpoch;
  }
}
