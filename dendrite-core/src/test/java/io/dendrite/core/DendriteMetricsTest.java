package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DendriteMetricsTest {

  @Test
  void eachThreadSeesTheRoundTripsOfItsOwnOperations() throws Exception {
    DendriteMetrics metrics = new DendriteMetrics();
    metrics.completed(DendriteMetrics.Operation.GET_HIT, 1);
    metrics.completed(DendriteMetrics.Operation.WRITE, 4);
    AtomicLong otherThread = new AtomicLong();
    Thread other = new Thread(() -> {
      metrics.completed(DendriteMetrics.Operation.GET_MISS, 7);
      otherThread.set(metrics.roundTripsOfCurrentThread());
    });
    other.start();
    other.join();

    assertThat(metrics.roundTripsOfCurrentThread()).isEqualTo(5);
    assertThat(otherThread.get()).isEqualTo(7);
    assertThat(metrics.snapshot().roundTripsPerMiss()).isEqualTo(7.0);
  }
}
