package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine.ParameterException;

/** IqServerMain's command line: what each option becomes, and how a bad one is named. */
class ServerOptionsTest {

  @TempDir Path dir;

  private static IqServerConfig config(String... argv) {
    return ServerOptions.parse(argv).config();
  }

  @Test
  void noOptionsAreTheBuildersDefaults() {
    assertThat(config()).isEqualTo(IqServerConfig.defaults());
    assertThat(ServerOptions.parse().handover()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void everyOptionReachesTheConfiguration() throws IOException {
    Path authFile = Files.writeString(dir.resolve("users"), "app:s3cret\nops:0ps\n");
    IqServerConfig config =
        config(
            "--listen", "0.0.0.0",
            "--port", "0",
            "--threads", "3",
            "--max-conns", "50",
            "--idle-timeout", "30",
            "--auth-file", authFile.toString(),
            "--login-timeout", "4",
            "--max-pending-logins", "7",
            "--pin-users", "app",
            "--fence-users", "app,ops",
            "--reserved-prefixes", "BW:,Lock:",
            "--max-held-per-conn", "1m",
            "--max-held-per-user", "2M",
            "--max-held-total", "3g",
            "--max-item-size", "512k",
            "--memory", "128m",
            "--pinned-memory", "1048576",
            "--lease-ms", "2500",
            "--transport", "nio",
            "--pready-gate", "off",
            "--lapse-drops-value", "off");

    assertThat(config.listenAddress()).isEqualTo("0.0.0.0");
    assertThat(config.port()).isZero();
    assertThat(config.threads()).isEqualTo(3);
    assertThat(config.maxConnections()).isEqualTo(50);
    assertThat(config.idleTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.credentials().required()).isTrue();
    assertThat(config.loginTimeout()).isEqualTo(Duration.ofSeconds(4));
    assertThat(config.maxPendingLogins()).isEqualTo(7);
    assertThat(config.pinUsers()).containsExactly("app");
    assertThat(config.fenceUsers()).containsExactlyInAnyOrder("app", "ops");
    assertThat(config.reservedPrefixes()).containsExactly("BW:", "Lock:");
    assertThat(config.maxHeldPerConnection()).isEqualTo(1L << 20);
    assertThat(config.maxHeldPerUser()).isEqualTo(2L << 20);
    assertThat(config.maxHeldTotal()).isEqualTo(3L << 30);
    assertThat(config.maxItemSize()).isEqualTo(512 << 10);
    assertThat(config.memoryBytes()).isEqualTo(128L << 20);
    assertThat(config.pinnedMemoryBytes()).isEqualTo(1L << 20);
    assertThat(config.leaseLifetime()).isEqualTo(Duration.ofMillis(2500));
    assertThat(config.epoll()).isFalse();
    assertThat(config.preadyGate()).isFalse();
    assertThat(config.lapseDropsValue()).isFalse();
  }

  @Test
  void theOtherValuesOfTheWordOptions() {
    IqServerConfig config =
        config("--transport", "epoll", "--pready-gate", "on", "--lapse-drops-value", "on");
    assertThat(config.epoll()).isTrue();
    assertThat(config.preadyGate()).isTrue();
    assertThat(config.lapseDropsValue()).isTrue();
    assertThat(config("--reserved-prefixes", "none").reservedPrefixes()).isEmpty();
  }

  @Test
  void thePortFileIsWhereTheServerWritesItsPort() {
    assertThat(ServerOptions.parse().portFile()).isNull();
    assertThat(ServerOptions.parse("--port-file", "run/iq.port").portFile())
        .isEqualTo(Path.of("run/iq.port"));
  }

  @Test
  void handoverMillisIsTheShutdownDeadline() {
    assertThat(ServerOptions.parse("--handover-ms", "0").handover()).isEqualTo(Duration.ZERO);
    assertThat(ServerOptions.parse("--handover-ms", "2500").handover())
        .isEqualTo(Duration.ofMillis(2500));
  }

  @Test
  void aRepeatedOptionsLastValueWins() {
    assertThat(config("--port", "1", "--port", "2").port()).isEqualTo(2);
  }

  @Test
  void helpIsAskedForWithEitherNameAnywhere() {
    assertThat(ServerOptions.parse("--help")).isNull();
    assertThat(ServerOptions.parse("-h")).isNull();
    assertThat(ServerOptions.parse("--port", "1", "--help")).isNull();
  }

  static Stream<Arguments> badArguments() {
    return Stream.of(
        Arguments.of(List.of("--bogus"), "Unknown option: '--bogus'"),
        Arguments.of(List.of("--port"), "Missing required parameter for option '--port' (<n>)"),
        Arguments.of(
            List.of("--port", "x"), "Invalid value for option '--port': 'x' is not an int"),
        Arguments.of(
            List.of("--port", "70000"),
            "Invalid value for option '--port': port must be in [0, 65535], got 70000"),
        Arguments.of(
            List.of("--memory", "6x"),
            "Invalid value for option '--memory': needs a size like 64m, got 6x"),
        Arguments.of(
            List.of("--transport", "kqueue"),
            "Invalid value for option '--transport': must be epoll or nio, got kqueue"),
        Arguments.of(
            List.of("--pready-gate", "maybe"),
            "Invalid value for option '--pready-gate': must be on or off, got maybe"),
        Arguments.of(
            List.of("--lapse-drops-value", "yes"),
            "Invalid value for option '--lapse-drops-value': must be on or off, got yes"),
        Arguments.of(
            List.of("--handover-ms", "-1"),
            "Invalid value for option '--handover-ms': must not be negative, got -1"),
        Arguments.of(
            List.of("--tls-keystore", "server.p12"),
            "--tls-keystore and --tls-password-file go together"),
        Arguments.of(
            List.of("--auth-file", "/no/such/file"),
            "Invalid value for option '--auth-file': cannot read the auth file /no/such/file"));
  }

  @ParameterizedTest
  @MethodSource("badArguments")
  void aBadArgumentIsRefusedNamingItsOption(List<String> argv, String message) {
    assertThatThrownBy(() -> config(argv.toArray(String[]::new)))
        .isInstanceOf(ParameterException.class)
        .hasMessage(message);
  }

  @Test
  void aValueOnlyTheWholeConfigurationRefusesIsABadArgumentToo() {
    assertThatThrownBy(() -> config("--pin-users", "app"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("pin user app");
  }

  @Test
  void theHelpNamesEveryOptionWithItsValueAndDefault() {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    IqServerMain.usage(new PrintStream(printed, true, StandardCharsets.UTF_8));
    String help = printed.toString(StandardCharsets.UTF_8);

    assertThat(help).startsWith("Usage: java -jar iq-server.jar [options]\n");
    for (String option :
        List.of(
            "--listen <addr>",
            "--port <n>",
            "--port-file <path>",
            "--threads <n>",
            "--max-conns <n>",
            "--idle-timeout <s>",
            "--tls-keystore <path>",
            "--tls-password-file <p>",
            "--auth-file <path>",
            "--login-timeout <s>",
            "--max-pending-logins <n>",
            "--pin-users <u,...>",
            "--reserved-prefixes <p,...>",
            "--fence-users <u,...>",
            "--max-held-per-conn <size>",
            "--max-held-per-user <size>",
            "--max-held-total <size>",
            "--max-item-size <size>",
            "--memory <size>",
            "--pinned-memory <size>",
            "--lease-ms <n>",
            "--transport <t>",
            "--pready-gate <on|off>",
            "--lapse-drops-value <on|off>",
            "--handover-ms <n>",
            "-h, --help")) {
      assertThat(help).contains(option);
    }
    assertThat(help)
        .contains("TCP port (default 11211; 0 = ephemeral)")
        .contains("memory for unpinned items (default 64m)")
        .contains("(default 10000; 0 stops at once)")
        .endsWith("Sizes take an optional k, m or g suffix (powers of 1024).\n");
    assertThat(Set.of(help.split("\n")))
        .as("no line wider than the help's width")
        .allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(118));
  }
}
