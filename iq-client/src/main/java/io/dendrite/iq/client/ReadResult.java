package io.dendrite.iq.client;

import java.time.Duration;

/**
 * What a lease-aware read found. Exactly one of:
 * <ul>
 *   <li>{@link Hit}: the value is cached;</li>
 *   <li>{@link Leased}: a miss, and this caller now holds the I lease: read the data store, then
 *       {@link LeaseHandle#fill fill} (or close the handle to give the lease up);</li>
 *   <li>{@link NoValue}: a miss without a lease: read the data store but do not fill;</li>
 *   <li>{@link Busy}: other holders kept the lease until the backoff deadline passed;</li>
 *   <li>{@link Aborted}: (sessions only) a conflicting writer aborted this session.</li>
 * </ul>
 */
public sealed interface ReadResult
    permits ReadResult.Hit,
        ReadResult.Leased,
        ReadResult.NoValue,
        ReadResult.Busy,
        ReadResult.Aborted {

  /**
   * The value was cached.
   *
   * @param value the value; {@link CacheValue#pending()} carries the TARDIS pending bit
   */
  record Hit(CacheValue value) implements ReadResult {}

  /**
   * A miss with the I lease granted to this caller.
   *
   * @param lease the lease; close it if you do not fill
   */
  record Leased(LeaseHandle lease) implements ReadResult {}

  /** A miss where the server says "go to the data store, do not fill". */
  record NoValue() implements ReadResult {}

  /**
   * Hot misses until the backoff deadline: somebody else holds the key's lease.
   *
   * @param waited how long this caller kept retrying
   */
  record Busy(Duration waited) implements ReadResult, RefreshResult {}

  /** The session was aborted by a conflicting writer; end it and start over. */
  record Aborted() implements ReadResult {}
}
