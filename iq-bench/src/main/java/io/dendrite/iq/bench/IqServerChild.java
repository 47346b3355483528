package io.dendrite.iq.bench;

import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.server.PortFile;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An IQ server ({@code IqServerMain} with its default threads) in a child JVM on this JVM's class path, so that
 * its CPU time can be read apart from the load generator's. It listens on an ephemeral loopback port, which it
 * writes to its {@code --port-file}; its output is copied to this JVM's stderr.
 */
final class IqServerChild implements AutoCloseable {

  private final Process process;
  private final ServerAddress address;
  private final Thread stopOnExit;

  private IqServerChild(Process process, ServerAddress address, Thread stopOnExit) {
    this.process = process;
    this.address = address;
    this.stopOnExit = stopOnExit;
  }

  /** Starts the server with {@code serverOptions} (IqServerMain's, besides {@code --port}) and waits until it listens. */
  static IqServerChild start(List<String> serverOptions) throws IOException, InterruptedException {
    Path portFolder = Files.createTempDirectory("iq-server-child-");
    Path portFile = portFolder.resolve("port");
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // Its "listening" and "stopped" lines in the benchmark's log.
                "-Dorg.slf4j.simpleLogger.log.io.dendrite.iq.server.IqServer=info",
                "-cp",
                System.getProperty("java.class.path"),
                "io.dendrite.iq.server.IqServerMain",
                "--port",
                "0",
                "--port-file",
                portFile.toString(),
                "--handover-ms",
                "0"));
    command.addAll(serverOptions);
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    Thread stopOnExit = new Thread(process::destroyForcibly, "iq-server-child-stop");
    Runtime.getRuntime().addShutdownHook(stopOnExit);
    Thread output = new Thread(() -> copyOutput(process), "iq-server-child-output");
    output.setDaemon(true);
    output.start();
    IqServerChild started = null;
    try {
      int port = PortFile.await(portFile, Duration.ofSeconds(60), process::isAlive);
      started = new IqServerChild(process, new ServerAddress("127.0.0.1", port), stopOnExit);
      return started;
    } finally {
      if (started == null) {
        process.destroyForcibly();
        Runtime.getRuntime().removeShutdownHook(stopOnExit);
      }
      Files.deleteIfExists(portFile);
      Files.deleteIfExists(portFolder);
    }
  }

  private static void copyOutput(Process process) {
    try (BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        System.err.println("[iq-server pid " + process.pid() + "] " + line);
      }
    } catch (IOException e) {
      System.err.println("[iq-server pid " + process.pid() + "] output lost: " + e);
    }
  }

  ServerAddress address() {
    return address;
  }

  long pid() {
    return process.pid();
  }

  /** SIGTERM (the server's graceful shutdown), then SIGKILL if it is still there after 10 s. */
  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    Runtime.getRuntime().removeShutdownHook(stopOnExit);
  }
}
