package io.dendrite.iq.bench;

import io.dendrite.iq.client.ServerAddress;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An IQ server ({@code IqServerMain} with its default threads) in a child JVM on this JVM's class path, so that
 * its CPU time can be read apart from the load generator's. It listens on an ephemeral loopback port, which it
 * reports in its "IQ server listening on host:port" log line; its output is copied to this JVM's stderr.
 */
final class IqServerChild implements AutoCloseable {

  private static final Pattern LISTENING = Pattern.compile("IQ server listening on [^ ]+:(\\d+) ");

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
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dorg.slf4j.simpleLogger.log.io.dendrite.iq.server.IqServer=info",
                "-cp",
                System.getProperty("java.class.path"),
                "io.dendrite.iq.server.IqServerMain",
                "--port",
                "0",
                "--handover-ms",
                "0"));
    command.addAll(serverOptions);
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    Thread stopOnExit = new Thread(process::destroyForcibly, "iq-server-child-stop");
    Runtime.getRuntime().addShutdownHook(stopOnExit);
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread output = new Thread(() -> copyOutput(process, port), "iq-server-child-output");
    output.setDaemon(true);
    output.start();
    try {
      return new IqServerChild(
          process, new ServerAddress("127.0.0.1", port.get(60, TimeUnit.SECONDS)), stopOnExit);
    } catch (ExecutionException | TimeoutException e) {
      process.destroyForcibly();
      Runtime.getRuntime().removeShutdownHook(stopOnExit);
      throw new IOException("the IQ server child did not report its port: " + e, e);
    }
  }

  private static void copyOutput(Process process, CompletableFuture<Integer> port) {
    try (BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        System.err.println("[iq-server pid " + process.pid() + "] " + line);
        Matcher listening = LISTENING.matcher(line);
        if (listening.find()) {
          port.complete(Integer.parseInt(listening.group(1)));
        }
      }
    } catch (IOException | RuntimeException e) {
      port.completeExceptionally(e);
    }
    port.completeExceptionally(new IOException("the IQ server child exited"));
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
