package io.dendrite.iq.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.assertj.core.data.Offset.offset;

import io.dendrite.iq.bench.ServerCpu.CpuPerRequest;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** /proc stat parsing, the CPU-per-request arithmetic and how memcached's pid file is trusted. */
class ServerCpuTest {

  /** A memcached's /proc/<pid>/stat: utime (field 14) 79, stime (field 15) 66. */
  private static final String MEMCACHED_STAT =
      "28465 (memcached) S 1 28365 27977 0 -1 4194560 2129 163 3 0 79 66 0 0"
          + " 20 0 8 0 3876037 275095552 2554 18446744073709551615 94185150922752 94185151090405 140721006174064 0 0"
          + " 0 0 4100 16899 0 0 0 17 0 0 0 0 0 0 94185151157648 94185151162312 94185180770304 140721006180988"
          + " 140721006181053 140721006181053 140721006182373 0\n";

  @Test
  void userPlusSystemTicksFromAStatLine() {
    assertThat(ServerCpu.ticksOfStat(MEMCACHED_STAT)).isEqualTo(79 + 66);
  }

  @Test
  void aCommandNameWithSpacesAndParenthesesDoesNotShiftTheFields() {
    String stat = MEMCACHED_STAT.replace("(memcached)", "(a) b ( 7 8 (x))");
    assertThat(ServerCpu.ticksOfStat(stat)).isEqualTo(79 + 66);
    String large = "7 (j) R 1 2 3 4 5 6 7 8 9 10 123456789012 987654321098 0 0 20 0 1 0 5 6 7";
    assertThat(ServerCpu.ticksOfStat(large)).isEqualTo(123456789012L + 987654321098L);
  }

  @Test
  void aTextThatIsNotAStatLineIsRefused() {
    assertThatThrownBy(() -> ServerCpu.ticksOfStat("28465 memcached S 1 2 3"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ServerCpu.ticksOfStat("28465 (memcached) S 1 2 3"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void cpuMicrosecondsPerRequest() {
    // 250 ticks at 100 per second are 2.5 s of CPU; over 500,000 requests 5 µs each.
    assertThat(CpuPerRequest.of(250, 100, 500_000).micros()).isEqualTo(5.0);
    assertThat(CpuPerRequest.of(250, 100, 500_000).format()).isEqualTo("5.0");
    // at 1000 ticks per second the same ticks are a tenth of the time
    assertThat(CpuPerRequest.of(250, 1000, 500_000).micros()).isEqualTo(0.5);
    assertThat(CpuPerRequest.of(3, 100, 7).micros()).isCloseTo(30_000.0 / 7, offset(1e-9));
    assertThat(CpuPerRequest.of(0, 100, 10).micros()).isZero();
  }

  @Test
  void noRequestsOrNoProcessGiveNoFigure() {
    CpuPerRequest none = CpuPerRequest.of(5, 100, 0);
    assertThat(none.missing()).isNotNull();
    assertThat(none.format()).isEqualTo("–");
    CpuPerRequest missing = ServerCpu.missing("embedded").begin().end(1_000);
    assertThat(missing.missing()).isEqualTo("embedded");
    assertThat(ServerCpu.ofProcess(Long.MAX_VALUE).begin().end(1_000).format()).isEqualTo("–");
  }

  @Test
  void thisJvmsOwnCpuIsMeasured() {
    assumeThat(Files.isReadable(Path.of("/proc/self/stat"))).isTrue();
    ServerCpu.Phase phase = ServerCpu.ofProcess(ProcessHandle.current().pid()).begin();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long spinUntil = threads.getCurrentThreadCpuTime() + 200_000_000; // 200 ms of this thread's CPU
    long sum = 0;
    while (threads.getCurrentThreadCpuTime() < spinUntil) {
      sum += sum * 31 + 1;
    }
    CpuPerRequest perRequest = phase.end(2);
    assertThat(perRequest.missing()).as("sum %d", sum).isNull();
    // the process spent at least the 200 ms, less a clock tick at either end; over 2 requests
    assertThat(perRequest.micros()).isGreaterThanOrEqualTo(90_000.0);
  }

  @Test
  void theListeningPortOfAMemcachedCommandLine() {
    assertThat(
            ServerCpu.memcachedPort(
                List.of("memcached", "-u", "root", "-l", "127.0.0.1", "-p", "11311", "-t", "2")))
        .isEqualTo(OptionalInt.of(11311));
    assertThat(ServerCpu.memcachedPort(List.of("/usr/bin/memcached", "-m", "64")))
        .isEqualTo(OptionalInt.of(11211));
    assertThat(ServerCpu.memcachedPort(List.of("memcached", "--port=11411")))
        .isEqualTo(OptionalInt.of(11411));
    assertThat(ServerCpu.memcachedPort(List.of("memcached", "-p11511", "-P", "/tmp/pid")))
        .isEqualTo(OptionalInt.of(11511));
    assertThat(ServerCpu.memcachedPort(List.of("java", "-p", "11311"))).isEmpty();
    assertThat(ServerCpu.memcachedPort(List.of())).isEmpty();
  }
}
