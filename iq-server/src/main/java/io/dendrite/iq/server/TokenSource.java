package io.dendrite.iq.server;

import java.nio.ByteBuffer;
import java.security.SecureRandom;

/**
 * Hands out lease tokens: 62 random bits from a {@link SecureRandom}, with bit 62 set, so every token is positive,
 * far above 0 ("no token") and 3 ("hot miss"), and cannot be guessed from the tokens a client saw. A lease token is
 * what lets a holder fill, swap or end a lease; sequential tokens let any client end another's lease by counting.
 * Random tokens also never repeat across restarts in practice (IQ-Twemcached restarts its counter at 5, so a holder
 * from before a restart could match a new lease): two of 2^62 values meet once in about 2^31 grants of one key.
 *
 * <p>The random bytes are drawn 4 KiB at a time per thread: one {@code SecureRandom} call per 512 tokens, so a
 * grant costs about as much as an increment did.
 */
final class TokenSource {
  private static final int TOKENS_PER_DRAW = 512;
  private static final SecureRandom SEEDS = new SecureRandom();

  private final ThreadLocal<ByteBuffer> drawn =
      ThreadLocal.withInitial(
          () ->
              ByteBuffer.allocate(TOKENS_PER_DRAW * Long.BYTES)
                  .position(TOKENS_PER_DRAW * Long.BYTES));

  long next() {
    ByteBuffer random = drawn.get();
    if (!random.hasRemaining()) {
      byte[] bytes = random.array();
      synchronized (SEEDS) {
        SEEDS.nextBytes(bytes);
      }
      random.clear();
    }
    return (random.getLong() & ((1L << 62) - 1)) | (1L << 62);
  }
}
