package io.dendrite.writeback.change;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.writeback.kernel.BufferedWriteKey;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A document whose cache keys would pass memcached's 250-byte limit is refused when its key is made, before any
 * write could queue a log record or a listing naming a key the cache refuses (such a record used to make every later
 * miss of its range throw, for good).
 */
class EntityKeyTest {

  @Test
  void aStringIdTooLongForTheCacheIsRefusedSayingWhy() {
    String id = "x".repeat(200);
    assertThatThrownBy(() -> new EntityKey("users", id))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("document users/" + "x".repeat(40) + "... is too long for the cache")
        .hasMessageContaining("over memcached's 250");
  }

  @Test
  void theLongestAcceptedKeyKeepsEveryDerivedKeyWithinTheLimit() {
    String longest = null;
    for (int length = 1; length < 250; length++) {
      try {
        new EntityKey("users", "y".repeat(length));
        longest = "y".repeat(length);
      } catch (IllegalArgumentException refused) {
        break;
      }
    }
    assertThat(longest).isNotNull();
    String bufferedWrite = BufferedWriteKey.of(new EntityKey("users", longest));
    assertThat(("SessionMap:" + bufferedWrite).getBytes(StandardCharsets.UTF_8).length)
        .isLessThanOrEqualTo(250);
    assertThat(
            ("Lock:"
                    + BufferedWriteKey.of(
                        BufferedWriteKey.TELEPORTED, new EntityKey("users", longest)))
                .length())
        .isLessThanOrEqualTo(250);
  }

  @Test
  void aCollectionWithWhitespaceIsRefused() {
    assertThatThrownBy(() -> new EntityKey("my users", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("whitespace");
  }
}
