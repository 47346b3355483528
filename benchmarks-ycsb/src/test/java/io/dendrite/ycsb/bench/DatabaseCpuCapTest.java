package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --db-cpus} against made-up cgroup directories: plain files stand in for the kernel's. */
class DatabaseCpuCapTest {

  @TempDir Path dir;

  @Test
  void parsesPositiveDecimalsOnly() {
    assertThat(DatabaseCpuCap.parseCpus("0.25")).isEqualTo(0.25);
    assertThat(DatabaseCpuCap.parseCpus("1")).isEqualTo(1.0);
    assertThat(DatabaseCpuCap.parseCpus("1.5")).isEqualTo(1.5);
    assertThat(DatabaseCpuCap.parseCpus(".5")).isEqualTo(0.5);
    assertThat(DatabaseCpuCap.parseCpus("2.")).isEqualTo(2.0);
    for (String bad :
        List.of("0", "00.000", "-0.5", "-1", "+1", "one", "1e2", "NaN", "Infinity", " ")) {
      assertThatThrownBy(() -> DatabaseCpuCap.parseCpus(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "--db-cpus needs a positive number of cores (a decimal such as 0.25, 1 or 1.5), got '"
                  + bad
                  + "'");
    }
    assertThatThrownBy(() -> new DatabaseCpuCap(0, dir, dir))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(DatabaseCpuCap.format(0.25)).isEqualTo("0.25");
    assertThat(DatabaseCpuCap.format(2.0)).isEqualTo("2");
  }

  @Test
  void attachWritesEachPidToTheGroupAndDetachToTheRoot() throws IOException {
    Path group = Files.createDirectories(dir.resolve("dendrite-db"));
    Files.writeString(group.resolve("cgroup.procs"), "");
    Files.writeString(dir.resolve("cgroup.procs"), "1\n");
    DatabaseCpuCap cap = new DatabaseCpuCap(0.25, group, dir);

    cap.attach(List.of(4242L));
    assertThat(Files.readString(group.resolve("cgroup.procs"))).isEqualTo("4242\n");

    cap.detach(List.of(4242L));
    assertThat(Files.readString(dir.resolve("cgroup.procs"))).isEqualTo("4242\n");
  }

  @Test
  void attachFailsNamingTheFileWhenThePidCannotBeMoved() {
    DatabaseCpuCap cap = new DatabaseCpuCap(0.25, dir.resolve("gone"), dir);

    assertThatThrownBy(() -> cap.attach(List.of(7L)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("cannot move pid 7 into " + dir.resolve("gone/cgroup.procs"));
    assertThatThrownBy(
            () -> new DatabaseCpuCap(0.25, dir, dir.resolve("gone")).detach(List.of(7L, 8L)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("cannot move pid 7")
        .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
  }

  @Test
  void theServerPidsComeFromThePidFilesOfRunningProcessesEachDatabaseOnce() throws IOException {
    long me = ProcessHandle.current().pid();
    Path pidFile = Files.writeString(dir.resolve("mariadbd.pid"), me + "\n");
    Database mysql = new Database("mysql", () -> {}, Optional.of(pidFile), Optional.empty());

    assertThat(DatabaseCpuCap.serverPids(List.of(mysql, mysql))).containsExactly(me);

    Database missing =
        new Database(
            "mongodb", () -> {}, Optional.of(dir.resolve("ferretdb.pid")), Optional.empty());
    assertThatThrownBy(() -> DatabaseCpuCap.serverPids(List.of(mysql, missing)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("no pid file " + dir.resolve("ferretdb.pid"))
        .hasMessageContaining("DENDRITE_SERVICES_DIR");
    assertThatThrownBy(() -> DatabaseCpuCap.serverPids(List.of(Database.withoutReset("basicdb"))))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("basicdb has no server process of its own to cap");
    Path dead = Files.writeString(dir.resolve("dead.pid"), "999999999\n");
    assertThatThrownBy(
            () ->
                DatabaseCpuCap.serverPids(
                    List.of(new Database("mysql", () -> {}, Optional.of(dead), Optional.empty()))))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("names 999999999, which is not running");
  }

  @Test
  void readsTheQuotaAndTheThrottlingOfCgroupV1AndV2() throws IOException {
    Path v1 = Files.createDirectories(dir.resolve("v1"));
    Files.writeString(v1.resolve("cpu.cfs_quota_us"), "25000\n");
    Files.writeString(v1.resolve("cpu.cfs_period_us"), "100000\n");
    Files.writeString(
        v1.resolve("cpu.stat"),
        "nr_periods 400\nnr_throttled 300\nthrottled_time 15000000000\nnr_bursts 0\nburst_time 0\n");
    DatabaseCpuCap capV1 = new DatabaseCpuCap(0.25, v1, dir);

    assertThat(capV1.describe())
        .isEqualTo("cgroup v1 " + v1 + ", cpu.cfs_quota_us 25000 / cpu.cfs_period_us 100000");
    DatabaseCpuCap.Throttling t1 = capV1.throttling().orElseThrow();
    assertThat(t1).isEqualTo(new DatabaseCpuCap.Throttling(400, 300, 15.0));
    assertThat(t1.since(new DatabaseCpuCap.Throttling(100, 50, 5.0)).describe())
        .isEqualTo("throttled in 250 of 300 periods (10.0 s)");

    Path v2 = Files.createDirectories(dir.resolve("v2"));
    Files.writeString(v2.resolve("cpu.max"), "25000 100000\n");
    Files.writeString(
        v2.resolve("cpu.stat"),
        "usage_usec 9000\nuser_usec 6000\nsystem_usec 3000\nnr_periods 10\nnr_throttled 4\nthrottled_usec 2500000\n");
    DatabaseCpuCap capV2 = new DatabaseCpuCap(0.25, v2, dir);

    assertThat(capV2.describe()).isEqualTo("cgroup v2 " + v2 + ", cpu.max 25000 100000");
    assertThat(capV2.throttling()).contains(new DatabaseCpuCap.Throttling(10, 4, 2.5));
    assertThat(new DatabaseCpuCap(0.25, dir.resolve("none"), dir).throttling()).isEmpty();
  }
}
