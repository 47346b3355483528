package io.dendrite.iq.server;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands out lease tokens. IQ-Twemcached restarts its counter at 5, so a holder from before a
 * restart can match a new lease. Here the counter starts at the wall-clock millisecond shifted left
 * 20 bits plus 20 random bits: a later start begins above anything an earlier process could have
 * reached unless it granted over a million leases per millisecond of its life. Tokens 0 ("no token")
 * and 3 ("hot miss") are far below that range.
 */
final class TokenSource {

  private final AtomicLong next;

  TokenSource() {
    long seed = (System.currentTimeMillis() << 20) | (new SecureRandom().nextInt(1 << 20));
    this.next = new AtomicLong(seed);
  }

  long next() {
    return next.incrementAndGet();
  }
}
