package io.dendrite.writeback.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A value moved aside is copied under a key of its own that memcached accepts, whatever the original key's length:
 * {@code Undecodable:} plus a key of 239 to 250 bytes used to pass the limit, and the move failed on every drain.
 */
class UndecodableCopyKeyTest {

  @Test
  void aShortKeysCopyIsNamedAfterIt() {
    assertThat(UndecodableValues.copyKey("BW:users:i7", 1)).isEqualTo("Undecodable:BW:users:i7");
    assertThat(UndecodableValues.copyKey("BW:users:i7", 2)).isEqualTo("Undecodable:BW:users:i7#2");
  }

  @Test
  void aLongKeysCopiesAreNamedByItsHashWithinTheLimitAndDistinct() {
    String key = "SessionMap:BW:users:s" + "z".repeat(229);
    assertThat(key.length()).isEqualTo(250);
    String first = UndecodableValues.copyKey(key, 1);
    String hundredth = UndecodableValues.copyKey(key, 100);
    assertThat(first).startsWith("Undecodable:#");
    assertThat(hundredth.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(250);
    assertThat(first).isNotEqualTo(hundredth);
    assertThat(UndecodableValues.copyKey(key + "a".substring(1), 1)).isEqualTo(first);
    assertThat(UndecodableValues.copyKey("SessionMap:BW:users:s" + "q".repeat(229), 1))
        .isNotEqualTo(first);
  }
}
