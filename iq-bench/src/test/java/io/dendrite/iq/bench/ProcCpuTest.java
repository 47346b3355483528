package io.dendrite.iq.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ProcCpuTest {

  /** A JVM's /proc/<pid>/stat as Linux 6 prints it: utime 1500 and stime 250 are the 14th and 15th fields. */
  private static final String JAVA_STAT =
      "12345 (java) S 1 12345 12345 0 -1 4194560 120000 0 5 0 1500 250 0 0 20 0"
          + " 40 0 123456 5000000000 90000 18446744073709551615 1 1 0 0 0 0 0 4096 16800 0 0 0 17 1 0 0 0 0 0\n";

  @Test
  void userPlusSystemTicksOfAProcessStat() {
    assertThat(ProcCpu.processTicks(JAVA_STAT)).isEqualTo(1750);
  }

  @Test
  void aCommandNameWithSpacesAndParenthesesIsSkippedUpToItsLastParenthesis() {
    String tricky = JAVA_STAT.replace("(java)", "(a) b (c) 9 9)");

    assertThat(ProcCpu.processTicks(tricky)).isEqualTo(1750);
  }

  @Test
  void countersPastTheRangeOfAnIntAreRead() {
    String large = "7 (j) R 1 2 3 4 5 6 7 8 9 10 123456789012 987654321098 0 0 20 0 1 0 5 6 7";

    assertThat(ProcCpu.processTicks(large)).isEqualTo(123456789012L + 987654321098L);
  }

  @Test
  void textThatIsNoProcessStatIsRefused() {
    assertThatThrownBy(() -> ProcCpu.processTicks("12345 java S 1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no ')'");
    assertThatThrownBy(() -> ProcCpu.processTicks("12345 (java) S 1 2 3"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("too few fields");
  }

  @Test
  void machineTicksCountIdleAndIowaitAsNotBusyAndLeaveGuestOut() {
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in
    // user.
    String procStat =
        "cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 50 2 25 400 10 1 1 5 3 0\nintr 1 2 3\n";

    assertThat(ProcCpu.machineTicks(procStat)).isEqualTo(new ProcCpu.MachineTicks(170, 990));
    assertThat(ProcCpu.machineTicks("cpu 10 0 5 85\n"))
        .isEqualTo(new ProcCpu.MachineTicks(15, 100));
    assertThatThrownBy(() -> ProcCpu.machineTicks("intr 1 2 3\n"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void thisJvmsTicksGrowWhenItBurnsCpuAndAGoneProcessHasNone() {
    assertThat(Path.of("/proc/self/stat"))
        .as("these tests read Linux /proc, which the CPU columns of dev/bench need")
        .isReadable();
    long pid = ProcessHandle.current().pid();
    long before = ProcCpu.processTicks(pid).orElseThrow();
    ProcCpu.MachineTicks machineBefore = ProcCpu.machineTicks().orElseThrow();

    burnCpu(300);

    assertThat(ProcCpu.processTicks(pid).orElseThrow()).isGreaterThan(before);
    assertThat(ProcCpu.threadTicks(pid, pid)).as("the main thread's tid is the pid").isPresent();
    assertThat(ProcCpu.machineTicks().orElseThrow().busy()).isGreaterThan(machineBefore.busy());
    assertThat(ProcCpu.clockTicksPerSecond().orElseThrow()).isPositive();
    assertThat(ProcCpu.processTicks(Long.MAX_VALUE)).isEmpty();
    assertThat(ProcCpu.threadTicks(pid, Long.MAX_VALUE)).isEmpty();
  }

  /** Spins until this thread has used {@code millis} of CPU, which at 100 ticks/s is 30 ticks for 300 ms. */
  static void burnCpu(long millis) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long until = threads.getCurrentThreadCpuTime() + millis * 1_000_000;
    long sink = 0;
    while (threads.getCurrentThreadCpuTime() < until) {
      for (int i = 0; i < 100_000; i++) {
        sink += i * 31L ^ sink;
      }
    }
    assertThat(sink).isNotEqualTo(42); // keeps the loop from being optimised away
  }
}
