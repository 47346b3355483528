package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code IqServerMain} as a process: what it prints and how it exits. */
class IqServerMainIT {

  private record Exit(int status, String out, String err) {}

  @TempDir Path dir;

  /** Starts the server's main in a JVM of its own on this one's class path. */
  private static Process start(String... argv) throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                IqServerMain.class.getName()));
    command.addAll(List.of(argv));
    Process process = new ProcessBuilder(command).start();
    process.getOutputStream().close();
    return process;
  }

  /** Runs the server's main in a JVM of its own, to the end. */
  private static Exit run(String... argv) throws IOException, InterruptedException {
    Process process = start(argv);
    // The help fits the pipes' buffers, so reading after the exit cannot block the child.
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("IqServerMain " + List.of(argv) + " did not exit");
    }
    return new Exit(
        process.exitValue(),
        new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
        new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  @Test
  void helpPrintsTheOptionsOnStdoutAndExitsZero() throws Exception {
    Exit exit = run("--help");
    assertThat(exit.status()).isZero();
    assertThat(exit.out())
        .startsWith("Usage: java -jar iq-server.jar [options]")
        .contains("--memory <size>");
    assertThat(exit.err()).isEmpty();
  }

  @Test
  void aBadOptionIsNamedOnStderrAboveTheHelpAndExitsTwo() throws Exception {
    Exit exit = run("--port", "11211", "--memroy", "1g");
    assertThat(exit.status()).isEqualTo(2);
    assertThat(exit.err())
        .startsWith("iq-server: Unknown options: '--memroy', '1g'")
        .contains("Usage: java -jar iq-server.jar [options]");
    assertThat(exit.out()).isEmpty();
  }

  @Test
  void aBadValueIsNamedWithItsOptionAndExitsTwo() throws Exception {
    Exit exit = run("--pinned-memory", "lots");
    assertThat(exit.status()).isEqualTo(2);
    assertThat(exit.err())
        .startsWith(
            "iq-server: Invalid value for option '--pinned-memory': needs a size like 64m, got lots");
  }

  @Test
  void thePortFileNamesTheEphemeralPortTheServerListensOn() throws Exception {
    Path portFile = dir.resolve("iq.port");
    Process server = start("--port", "0", "--port-file", portFile.toString(), "--handover-ms", "0");
    try {
      int port = PortFile.await(portFile, Duration.ofSeconds(60), server::isAlive);

      assertThat(Files.readString(portFile)).isEqualTo(port + "\n");
      assertThat(port).isPositive();
      try (TestConnection c = new TestConnection(port)) {
        assertThat(c.call("version")).startsWith("VERSION ");
      }
      try (var files = Files.list(dir)) {
        assertThat(files).as("no temporary file left beside it").containsExactly(portFile);
      }
    } finally {
      server.destroy(); // SIGTERM: the graceful stop
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    }
    assertThat(server.exitValue()).as("SIGTERM's status").isEqualTo(143);
  }

  @Test
  void aPortFileThatCannotBeWrittenStopsTheServerWithStatusOne() throws Exception {
    Exit exit = run("--port", "0", "--port-file", dir.resolve("no/such/folder/port").toString());
    assertThat(exit.status()).isEqualTo(1);
    assertThat(exit.err()).contains("iq-server: cannot write --port-file ");
  }
}
