package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.DataStoreUnavailableException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Figure 4.3's transitions. */
class ProcessModeTest {
  private static final RuntimeException DOWN = new DataStoreUnavailableException("down", null);

  @Test
  void failedBecomesRecoveryAfterPSuccessesAndNormalOnceNothingIsBuffered() {
    ProcessMode mode = new ProcessMode(2, Duration.ZERO);
    assertThat(mode.current()).isEqualTo(Mode.NORMAL);

    mode.failed(DOWN);
    mode.succeeded();
    assertThat(mode.current()).as("one success of two").isEqualTo(Mode.FAILED);
    mode.failed(DOWN);
    mode.succeeded();
    assertThat(mode.current()).as("a failure starts the count again").isEqualTo(Mode.FAILED);
    mode.succeeded();
    assertThat(mode.current()).isEqualTo(Mode.RECOVERY);
    mode.succeeded();
    assertThat(mode.current()).isEqualTo(Mode.RECOVERY);
    mode.nothingBuffered();
    assertThat(mode.current()).isEqualTo(Mode.NORMAL);
    assertThat(mode.transitions.sum()).isEqualTo(3);
  }

  @Test
  void nothingBufferedDoesNotEndFailedModeAndRecoveryCanFailAgain() {
    ProcessMode mode = new ProcessMode(1, Duration.ZERO);
    mode.failed(DOWN);
    mode.nothingBuffered();
    assertThat(mode.current()).isEqualTo(Mode.FAILED);
    mode.succeeded();
    mode.failed(DOWN);
    assertThat(mode.current()).isEqualTo(Mode.FAILED);
  }

  @Test
  void aProcessThatFindsBufferedWritesAtStartIsInRecovery() {
    ProcessMode mode = new ProcessMode(1, Duration.ZERO);
    mode.somethingBuffered();
    assertThat(mode.current()).isEqualTo(Mode.RECOVERY);
  }

  @Test
  void aCheckIsDueForOneCallerPerInterval() {
    ProcessMode mode = new ProcessMode(1, Duration.ofHours(1));
    assertThat(mode.checkDue()).isTrue();
    assertThat(mode.checkDue()).isFalse();
  }
}
