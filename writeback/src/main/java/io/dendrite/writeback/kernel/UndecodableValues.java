package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.engine.UndecodableValueException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Buffered values a drain cannot decode (truncated, written by a stray client or by a later, incompatible version):
 * applying them is impossible and retrying never helps, so a drain that stopped on one would never drain its queue
 * or batch again. Dropping one would lose an acknowledged write silently. So a drain moves it aside instead: it
 * copies the value, pinned and replicated like the original, to {@code Undecodable:<key>} ({@link #copyAside}),
 * removes the original as it removes an applied value, and only once that removal is done counts it and warns
 * ({@link #originalRemoved}). The copy is confirmed on its replicas before the original goes, so a crash in between
 * leaves two copies, never none. The copy stays until an operator deletes it; nothing lists or restores it.
 *
 * <p>Reads do not move values aside: a read that applied none of a value it cannot decode would serve a result
 * without a write that may have been acknowledged, so it fails ({@link #decode}).
 */
public final class UndecodableValues {
  private static final Logger log = LoggerFactory.getLogger(UndecodableValues.class);

  /** A damaged value is met again by every drain until it is moved: warned of a few times. */
  private static final FirstWarnings MOVED = new FirstWarnings(log, 20);

  /** How many earlier copies of one key's undecodable values a copy looks past for a free name. */
  private static final int MAX_COPIES = 100;

  private final PinnedReplicas replicas;
  private final LongAdder movedAside;

  /**
   * @param replicas where the copies are pinned: the engine's own, so a copy has the original's R
   * @param movedAside counts values whose original was removed after the copy
   */
  public UndecodableValues(PinnedReplicas replicas, LongAdder movedAside) {
    this.replicas = replicas;
    this.movedAside = movedAside;
  }

  /** A value copied aside, whose original is still in place. */
  public record Copy(String key, String copyKey, String why) {}

  /**
   * {@code decoder} applied to {@code value}, the value of {@code key}.
   *
   * @throws UndecodableValueException naming {@code key} when the decoder refuses the bytes
   */
  public static <T> T decode(String key, byte[] value, Function<byte[], T> decoder) {
    try {
      return decoder.apply(value);
    } catch (IllegalArgumentException undecodable) {
      throw new UndecodableValueException(key, undecodable);
    }
  }

  /**
   * The name of {@code key}'s {@code copy}-th copy: {@code Undecodable:<key>[#n]}, or, where that would pass
   * memcached's 250-byte key limit (a key of 239 bytes or more), {@code Undecodable:#<SHA-256 of key>[#n]}; the
   * warning names the original key either way.
   */
  static String copyKey(String key, int copy) {
    String suffix = copy == 1 ? "" : "#" + copy;
    String plain = UndecodableValueException.QUARANTINE_PREFIX + key + suffix;
    if (plain.getBytes(StandardCharsets.UTF_8).length <= 250) {
      return plain;
    }
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return UndecodableValueException.QUARANTINE_PREFIX
          + "#"
          + Base64.getUrlEncoder().withoutPadding().encodeToString(digest)
          + suffix;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  /**
   * Pins {@code value} on every replica of {@code Undecodable:<key>}, or, when that name holds another value
   * already (an earlier undecodable value of the same key, not yet deleted), of {@code Undecodable:<key>#2}, and so
   * on: a copy never replaces another. A name that holds these bytes already is reused, so copying again after a
   * crash or a lost lock makes no second copy.
   *
   * @throws IqException when a replica refused the copy (e.g. out of pinned memory); the original must stay then
   */
  public Copy copyAside(UndecodableValueException undecodable, byte[] value) {
    String key = undecodable.key();
    String why = undecodable.getCause().getMessage();
    for (int copy = 1; copy <= MAX_COPIES; copy++) {
      String copyKey = copyKey(key, copy);
      Optional<byte[]> there = replicas.get(copyKey);
      if (there.isPresent() && Arrays.equals(there.get(), value)) {
        return new Copy(key, copyKey, why);
      }
      if (there.isEmpty()) {
        Outcome stored = replicas.set(copyKey, value);
        if (!stored.isOk()) {
          throw new IqException(
              "could not move the undecodable value of "
                  + key
                  + " aside to "
                  + copyKey
                  + ": "
                  + stored);
        }
        return new Copy(key, copyKey, why);
      }
    }
    throw new IqException(
        "could not move the undecodable value of "
            + key
            + " aside: "
            + MAX_COPIES
            + " earlier copies of its undecodable values are still there; delete them");
  }

  /** The original of {@code copy} was removed from the drain's path: counts it and warns, naming both keys. */
  public void originalRemoved(Copy copy) {
    movedAside.increment();
    MOVED.warn(
        "moved the buffered value of {} aside to {}: it cannot be decoded ({}), so it was not applied; it stays"
            + " there, pinned, until deleted",
        copy.key(),
        copy.copyKey(),
        copy.why());
  }
}
