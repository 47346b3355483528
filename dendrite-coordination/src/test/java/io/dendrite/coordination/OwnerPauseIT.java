package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.faults.ChildJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fencing of a paused owner (SIGSTOP, as a long GC pause): its session lapses, another process takes its ranges,
 * and when it resumes, the very first ownership check it makes says it owns none of them, before ZooKeeper has told
 * it anything.
 */
@ExtendWith(RealServers.class)
class OwnerPauseIT {
  private static final List<String> RANGES = IntStream.range(0, 6).mapToObj(i -> "r" + i).toList();
  private static final Duration SESSION = Duration.ofSeconds(2);

  @Test
  void aPausedOwnerServesNothingItLostWhenItResumes(ZooKeeperAddress zk) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of(zk.connectString(), zk.service(), "paused", Long.toString(SESSION.toMillis())));
    args.addAll(RANGES);
    GainedRanges gained = new GainedRanges();
    Map<String, Long> taken = gained.epochs;
    try (ChildJvm child =
        ChildJvm.start(CoordinatorChild.class.getName(), List.of("-Xmx64m"), args)) {
      child.awaitLine(line -> line.equals("SERVING " + allAtEpoch(1)), Duration.ofSeconds(60));

      child.pause();
      try (ZooKeeperOwnership other =
          ZooKeeperOwnership.builder()
              .connectString(zk.connectString())
              .service(zk.service())
              .member("other")
              .sessionTimeout(SESSION)
              .ranges(RANGES)
              .listener(gained)
              .start()) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (taken.size() < RANGES.size() && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        assertThat(taken).as("the paused owner's session lapsed; all its ranges moved").hasSize(6);

        child.resume();
        String resumed =
            child.awaitLine(line -> line.startsWith("RESUMED "), Duration.ofSeconds(30));
        assertThat(resumed).as("the first check after the pause").isEqualTo("RESUMED {}");
        // It rejoins under a new session and gets its share back, under new epochs.
        child.awaitLine(
            line ->
                line.startsWith("SERVING {") && line.split("=").length == 4 && !line.contains("=1"),
            Duration.ofSeconds(60));
        assertThat(other.owned()).hasSize(3);
      }
    }
  }

  private static String allAtEpoch(long epoch) {
    StringBuilder text = new StringBuilder("{");
    for (int i = 0; i < RANGES.size(); i++) {
      text.append(i == 0 ? "" : ", ").append(RANGES.get(i)).append('=').append(epoch);
    }
    return text.append('}').toString();
  }
}
