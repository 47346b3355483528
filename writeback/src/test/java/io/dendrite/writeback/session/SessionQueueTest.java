package io.dendrite.writeback.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class SessionQueueTest {

  /** A line no engine wrote once failed every read of the queue, so none of its sessions was applied again. */
  @Test
  void aLineThatNamesNoSessionIsPassedOverAndTheOthersKeepTheirOrder() {
    byte[] value =
        "q/1 10\ngarbage\nq/2 notatime\n12345\nq/3 30\n".getBytes(StandardCharsets.UTF_8);
    assertThat(SessionQueue.entries(value))
        .containsExactly(
            new SessionQueue.Entry("q/1", Instant.ofEpochMilli(10)),
            new SessionQueue.Entry("q/3", Instant.ofEpochMilli(30)));
  }
}
