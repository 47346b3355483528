package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.TierClaim;
import java.time.Duration;

/**
 * The cache tier's record of which write-back engines may change its buffered writes ({@value #KEY}, a {@link
 * TierClaim}). An engine that locks in its own process ({@code singleProcess}) must be the only engine of the cache
 * tier: it holds the record <em>exclusively</em>, and any other engine, of either kind, is refused when it starts.
 * Engines that lock by leases in the cache tier hold it <em>shared</em>, so an exclusive engine cannot start beside
 * them. Without this, two processes that both declared themselves alone locked the same documents each in its own
 * JVM and overwrote each other's buffered writes.
 */
public final class EngineClaim implements AutoCloseable {

  /** The record's key: one per cache tier, since every engine shares the pending-writes partitions. */
  public static final String KEY = "WriteBackEngines";

  private static final String SHARED = "shared";

  private final TierClaim claim;

  private EngineClaim(TierClaim claim) {
    this.claim = claim;
  }

  /**
   * Takes the record for an engine that locks in its own process: no other engine of the cache tier may run. Waits
   * up to one {@code lifetime} for a record left by a crashed engine to lapse.
   *
   * @param holder names this engine in the record and in the refusal another engine gets
   * @throws IllegalStateException naming who holds the record, when it does not lapse in time
   */
  public static EngineClaim exclusive(
      IqClient cache, int replicas, String holder, Duration lifetime) {
    return new EngineClaim(
        TierClaim.exclusive(
            cache,
            replicas,
            KEY,
            "exclusive " + holder,
            lifetime,
            held ->
                refusal(
                    held,
                    "an engine with singleProcess(true) must be the only engine of its cache tier",
                    lifetime)));
  }

  /**
   * Joins the record for an engine that locks by leases in the cache tier: any number may run together, but not
   * beside an exclusive one.
   *
   * @throws IllegalStateException when an exclusive engine holds the record and it does not lapse in time
   */
  public static EngineClaim shared(IqClient cache, int replicas, Duration lifetime) {
    return new EngineClaim(
        TierClaim.shared(
            cache,
            replicas,
            KEY,
            SHARED,
            lifetime,
            held ->
                refusal(
                    held,
                    "an engine with singleProcess(true) holds it, and no other engine may run beside it",
                    lifetime)));
  }

  private static String refusal(String holder, String why, Duration lifetime) {
    return "the cache tier's write-back engines are held by \""
        + holder
        + "\": "
        + why
        + " (the record "
        + KEY
        + " lapses "
        + lifetime.toSeconds()
        + " s after its holder stops)";
  }

  /**
   * Whether this engine may still change buffered writes: for the exclusive holder, whether the record is surely
   * still its own (renewing it now if the last renewal is too old).
   *
   * @throws IllegalStateException when it is not, or cannot be shown to be: nothing may be changed then
   */
  public void check() {
    claim.check("this write-back engine's exclusive claim on the cache tier");
  }

  /** Gives the record up (the exclusive holder deletes it; shared holders let it lapse). */
  @Override
  public void close() {
    claim.close();
  }

  /** A name for this engine's record that no other engine, here or in another process, has: pid, host, nonce. */
  public static String holderName() {
    return TierClaim.holderName();
  }
}
