package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PendingMarkersTest {

  /** Pending markers were a plain set that nothing swept: one client's pending deletes grew it without end. */
  @Test
  void theTableStaysWithinItsWeightAndDropsTheLeastRecentlyUsedMarkers() {
    PendingMarkers markers = new PendingMarkers(100 * (8 + 64));
    for (int i = 0; i < 10_000; i++) {
      markers.add("key" + String.format("%05d", i));
    }
    assertThat(markers.size()).isLessThanOrEqualTo(100);
    assertThat(markers.dropped()).isGreaterThanOrEqualTo(9_900);
    assertThat(markers.contains("key09999")).as("the latest marker is kept").isTrue();
    assertThat(markers.remove("key09999")).isTrue();
    assertThat(markers.contains("key09999")).isFalse();
    assertThat(markers.remove("key09999")).isFalse();
  }
}
