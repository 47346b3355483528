package io.dendrite.writeback.engine;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.session.SessionWriteBack;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Both engines' builders follow one convention: a setter refuses a bad value at once, naming the setting and the
 * value; build() refuses what is missing or conflicting with an IllegalStateException.
 */
class EngineBuilderTest {

  @Test
  void aSetterRefusesABadValueNamingItsSettingAndTheValue() {
    assertThatThrownBy(() -> DocumentWriteBack.builder().replicas(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("replicas must be at least 1, got 0");
    assertThatThrownBy(() -> SessionWriteBack.builder().drainThreads(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("drainThreads must be at least 0, got -1");
    assertThatThrownBy(() -> DocumentWriteBack.builder().lockTimeout(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockTimeout must be a duration of zero or more, got PT-1S");
    assertThatThrownBy(() -> DocumentWriteBack.builder().drainBatch(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("drainBatch must be at least 1, got 0");
    assertThatThrownBy(() -> SessionWriteBack.builder().appliedSessionsCompaction(0, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("afterSessions must be at least 1, got 0");
  }

  @Test
  void buildRefusesWhatIsMissingOrConflicting() {
    assertThatThrownBy(() -> DocumentWriteBack.builder().build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("cache is required");
    try (IqClient oneServer = IqClient.builder().servers("127.0.0.1:1").build()) {
      assertThatThrownBy(() -> SessionWriteBack.builder().cache(oneServer).replicas(1).build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("store is required");
      assertThatThrownBy(() -> DocumentWriteBack.builder().cache(oneServer).build())
          .as("one copy is lost with its server: only asked for explicitly")
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("on 2 cache servers by default")
          .hasMessageContaining("ask for replicas(1) explicitly");
      assertThatThrownBy(() -> SessionWriteBack.builder().cache(oneServer).build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("on 2 cache servers by default");
      assertThatThrownBy(() -> DocumentWriteBack.builder().cache(oneServer).replicas(2).build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("replicas (2) must not exceed the cache's 1 servers");
    }
  }
}
