package io.dendrite.core;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.TierClaim;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The single-process coordinator: this process owns every range, as long as no other Dendrite owns it. Two
 * Dendrites with separate interval trees for one range would not see each other's cached entries, and one's writes
 * would leave the other's results stale; so a range is claimed in the cache tier itself ({@value #KEY_PREFIX}{@code
 * <collection>:<domain>}, a {@link TierClaim} renewed in the background), and a second claim is refused, whether it
 * comes from this process or from another instance of the same service. A range shared by several processes needs
 * the ZooKeeper coordinator ({@code PartitionedDendrite} in {@code dendrite-coordination}), which holds the same
 * record shared so that neither kind starts beside the other.
 *
 * <p>A crashed owner's claim lapses one {@linkplain #LocalCoordinator(Duration) lifetime} after it stopped; a
 * successor waits that long at most. An owner that was paused past its claim refuses its next miss and write ({@link
 * RangeClaim#check}).
 */
public final class LocalCoordinator implements Coordinator {
  /** The prefix of the ownership records' keys in the cache tier. */
  public static final String KEY_PREFIX = "Owner:";

  /** The value of the record while {@code PartitionedDendrite} processes share the range. */
  private static final String PARTITIONED = "partitioned";

  /** How long a record outlives a holder that stopped renewing it, unless a coordinator is given another. */
  private static final Duration DEFAULT_LIFETIME = Duration.ofSeconds(10);

  /** How many cache servers hold each ownership record (fewer when the tier has fewer). */
  static final int RECORD_REPLICAS = 2;

  private final Set<String> claimed = ConcurrentHashMap.newKeySet();
  private final Duration lifetime;

  /** A coordinator whose claims lapse 10 s after their owner stopped renewing them. */
  public LocalCoordinator() {
    this(DEFAULT_LIFETIME);
  }

  /**
   * A coordinator whose claims lapse {@code lifetime} after their owner stopped renewing them (at least 2 s): how
   * long the successor of a crashed owner waits.
   */
  public LocalCoordinator(Duration lifetime) {
    Objects.requireNonNull(lifetime, "lifetime");
    if (lifetime.toSeconds() < 2) {
      throw new IllegalArgumentException(
          "the claim lifetime must be at least 2 s, got " + lifetime);
    }
    this.lifetime = lifetime;
  }

  /** The key of {@code collection}/{@code domain}'s ownership record in the cache tier. */
  static String recordKey(String collection, String domain) {
    return KEY_PREFIX + collection + ":" + domain;
  }

  /**
   * Joins the range's record for a process of a {@code PartitionedDendrite} service: held shared with the service's
   * other processes, so that neither a plain Dendrite on the range (which holds it exclusively) nor the service
   * starts beside the other. Shared holders let it lapse when they stop.
   *
   * @throws IllegalStateException naming the plain Dendrite that holds it
   */
  public static TierClaim joinPartitioned(IqClient cache, String collection, String domain) {
    return TierClaim.shared(
        cache,
        RECORD_REPLICAS,
        recordKey(collection, domain),
        PARTITIONED,
        DEFAULT_LIFETIME,
        holder ->
            "range "
                + collection
                + "/"
                + domain
                + " is owned by a plain Dendrite ("
                + holder
                + "): PartitionedDendrite processes beside it would not see its cached results;"
                + " close it first");
  }

  /**
   * Claims the range in this coordinator only, not in the cache tier: for callers whose ownership is granted
   * elsewhere (the ZooKeeper coordinator's ranges) and who only need one open Dendrite per range here.
   */
  @Override
  public RangeClaim claim(String collection, String domain) {
    String range = collection + "/" + domain;
    if (!claimed.add(range)) {
      throw new IllegalStateException(
          "range " + range + " is already owned by another open Dendrite; close it first");
    }
    return () -> claimed.remove(range);
  }

  /**
   * Claims the range in the cache tier: refused while another Dendrite, in this process or another, owns it, or
   * {@code PartitionedDendrite} processes share it.
   *
   * @throws IllegalStateException naming the holder; at once for a holder that is alive, after one lifetime for a
   *     record that does not lapse
   */
  @Override
  public RangeClaim claim(String collection, String domain, IqClient cache) {
    String range = collection + "/" + domain;
    RangeClaim local = claim(collection, domain);
    TierClaim record;
    try {
      record =
          TierClaim.exclusive(
              cache,
              RECORD_REPLICAS,
              recordKey(collection, domain),
              "dendrite " + TierClaim.holderName(),
              lifetime,
              holder -> refusal(range, holder));
    } catch (RuntimeException refused) {
      local.close();
      throw refused;
    }
    return new RangeClaim() {
      @Override
      public void check() {
        record.check("range " + range + "'s ownership claim");
      }

      @Override
      public boolean excludesOtherOwners() {
        return true;
      }

      @Override
      public boolean mayKeepResultsInMemory() {
        return true; // check() refuses once the record may have lapsed
      }

      @Override
      public void close() {
        try {
          record.close();
        } finally {
          local.close();
        }
      }
    };
  }

  private String refusal(String range, String holder) {
    if (holder.equals(PARTITIONED)) {
      return "range "
          + range
          + " is served by PartitionedDendrite processes: a plain Dendrite beside them would not see their"
          + " cached results; use a PartitionedDendrite here too";
    }
    return "range "
        + range
        + " is already owned by "
        + holder
        + ": one Dendrite owns a range in a cache tier at a time (a second one, in this process or"
        + " another, would not see the first's cached results and its writes would leave them stale)."
        + " Close the other, or share the range between processes with .deployment(ManyProcesses"
        + " .overZooKeeper(...)) (dendrite-coordination). A crashed owner's claim lapses "
        + lifetime.toSeconds()
        + " s after it stopped";
  }
}
