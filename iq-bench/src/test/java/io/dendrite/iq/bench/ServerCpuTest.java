package io.dendrite.iq.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.assertj.core.data.Offset.offset;

import io.dendrite.iq.bench.ServerCpu.CpuPerRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** The CPU-per-request arithmetic and how memcached's pid file is trusted. */
class ServerCpuTest {

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
    ProcCpuTest.burnCpu(200);
    CpuPerRequest perRequest = phase.end(2);
    assertThat(perRequest.missing()).isNull();
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
