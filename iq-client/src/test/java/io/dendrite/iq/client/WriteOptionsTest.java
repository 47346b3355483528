package io.dendrite.iq.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class WriteOptionsTest {

  @Test
  void ttlIsRoundedUpToWholeSecondsSoShortTtlsDoNotMeanForever() {
    assertThat(WriteOptions.DEFAULT.exptime()).isZero();
    assertThat(WriteOptions.DEFAULT.withTtl(Duration.ofMillis(1)).exptime()).isEqualTo(1);
    assertThat(WriteOptions.DEFAULT.withTtl(Duration.ofSeconds(90)).exptime()).isEqualTo(90);
  }

  @Test
  void ttlBeyondThirtyDaysIsSentAsAnAbsoluteTime() {
    long now = System.currentTimeMillis() / 1000;
    long exptime = WriteOptions.DEFAULT.withTtl(Duration.ofDays(31)).exptime();
    assertThat(exptime)
        .isBetween(
            now + Duration.ofDays(31).toSeconds(), now + Duration.ofDays(31).toSeconds() + 5);
  }
}
