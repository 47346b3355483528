package io.dendrite.tardis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.faults.CuttableProxy;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * The outage the consistency tests run their load through: normal mode, the database cut, then recovery. The
 * recovery phase is timed from the moment every instance has left failed mode, not from the database's return: on a
 * busy machine a process may take seconds to get a connection again, and a fixed pause could end the run before any
 * instance ever served a request in recovery mode (the mode the negative controls need).
 */
final class OutagePhases {
  private static final Duration BEFORE = Duration.ofSeconds(3);
  private static final Duration CUT = Duration.ofSeconds(6);
  private static final Duration IN_RECOVERY = Duration.ofSeconds(6);
  private static final Duration LEAVING_FAILED_MODE = Duration.ofSeconds(90);

  private OutagePhases() {}

  /**
   * Runs the phases while the caller's threads run: 3 s normal, a 6 s cut, then 6 s once each of {@code modes}
   * has left failed mode.
   */
  static void run(CuttableProxy proxy, Supplier<List<Mode>> modes) throws InterruptedException {
    Thread.sleep(BEFORE.toMillis());
    proxy.cut();
    Thread.sleep(CUT.toMillis());
    proxy.restore();
    long deadline = System.nanoTime() + LEAVING_FAILED_MODE.toNanos();
    while (modes.get().contains(Mode.FAILED)) {
      assertThat(System.nanoTime())
          .as("waiting for every instance to leave failed mode: %s", modes.get())
          .isLessThan(deadline);
      Thread.sleep(50);
    }
    Thread.sleep(IN_RECOVERY.toMillis());
  }
}
