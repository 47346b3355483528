package io.dendrite.writeback.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.writeback.change.EntityKey;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

class BufferedWriteKeyTest {

  @Test
  void everyIdTypeSurvivesTheRoundTrip() {
    for (Object id : new Object[] {42, 42L, new ObjectId(), "ann smith\n:é", ""}) {
      EntityKey key = new EntityKey("users", id);

      String cacheKey = BufferedWriteKey.of(key);

      assertThat(cacheKey).startsWith("BW:users:").doesNotContain(" ", "\n");
      assertThat(BufferedWriteKey.parse(cacheKey)).isEqualTo(key);
    }
  }

  @Test
  void teleportedWritesHaveKeysOfTheirOwnThatParseToTheSameDocument() {
    EntityKey key = new EntityKey("users", 7L);

    String teleported = BufferedWriteKey.of(BufferedWriteKey.TELEPORTED, key);

    assertThat(teleported).isEqualTo("TW:users:l7").isNotEqualTo(BufferedWriteKey.of(key));
    assertThat(BufferedWriteKey.parse(teleported)).isEqualTo(key);
  }

  @Test
  void integerAndLongIdsAreDifferentDocuments() {
    assertThat(BufferedWriteKey.of(new EntityKey("users", 1)))
        .isNotEqualTo(BufferedWriteKey.of(new EntityKey("users", 1L)));
  }

  @Test
  void refusesKeysItDidNotMake() {
    assertThatThrownBy(() -> BufferedWriteKey.parse("PendingWrites:1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BufferedWriteKey.parse("BW:users:x1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BufferedWriteKey.parse("XW:users:l1"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
