package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Every failure of a named write reaches its caller as not applied or outcome unknown (or a bad argument). */
class WriteFailureKindsTest {

  @Test
  void whatChangedNothingSaysNotApplied() {
    DendriteBusyException busy = new DendriteBusyException("leases", null);
    assertThat(NotAppliedException.orOutcomeUnknown(busy)).isSameAs(busy);
    RuntimeException fenced =
        NotAppliedException.orOutcomeUnknown(
            new StoreFencedOutException(new FenceToken("f", 1), 2));
    assertThat(fenced).isInstanceOf(NotAppliedException.class);
    assertThat(fenced.getCause()).isInstanceOf(StoreFencedOutException.class);
    assertThat(NotAppliedException.orOutcomeUnknown(new RangeNotOwnedException("not owned")))
        .isInstanceOf(NotAppliedException.class);
  }

  @Test
  void aBadArgumentStaysWhatItIs() {
    IllegalArgumentException bad = new IllegalArgumentException("inverted");
    assertThat(NotAppliedException.orOutcomeUnknown(bad)).isSameAs(bad);
  }

  @Test
  void anyOtherFailureSaysTheOutcomeIsUnknown() {
    DataStoreException store = new DataStoreException("connection reset during commit", null);
    RuntimeException unknown = NotAppliedException.orOutcomeUnknown(store);
    assertThat(unknown).isInstanceOf(OutcomeUnknownException.class).hasCause(store);
    assertThat(NotAppliedException.orOutcomeUnknown(new IllegalStateException("closed")))
        .isInstanceOf(OutcomeUnknownException.class);
    OutcomeUnknownException already = new OutcomeUnknownException("no answer", null);
    assertThat(NotAppliedException.orOutcomeUnknown(already)).isSameAs(already);
  }
}
