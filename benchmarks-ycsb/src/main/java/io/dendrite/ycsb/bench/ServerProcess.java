package io.dendrite.ycsb.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;

/**
 * A cache server the runner starts as a child process on a free loopback port for one run (an IQ
 * server or Debian's memcached), asks for its {@code stats}, and stops again.
 */
public final class ServerProcess implements AutoCloseable {

  private static final long START_TIMEOUT_MILLIS = 60_000;

  /** Starts on a port another process took first, before one is given up on. */
  private static final int START_ATTEMPTS = 3;

  private final String name;
  private final Process process;
  private final int port;

  private ServerProcess(String name, Process process, int port) {
    this.name = name;
    this.process = process;
    this.port = port;
  }

  /** An IQ server process ({@code io.dendrite.iq.server.IqServerMain}) from the given class path. */
  public static ServerProcess iqServer(
      String java, String classpath, String memory, String pinnedMemory, Path log)
      throws IOException, InterruptedException {
    return start(
        "iq-server",
        port ->
            List.of(
                java,
                "-Xmx1g",
                "-cp",
                classpath,
                "io.dendrite.iq.server.IqServerMain",
                // A run's leftovers are not worth a handover: stop at once when the run is over.
                "--port",
                String.valueOf(port),
                "--memory",
                memory,
                "--pinned-memory",
                pinnedMemory,
                "--handover-ms",
                "0"),
        log,
        ServerProcess::freePort);
  }

  /** A memcached process with its own empty cache, so look-aside runs do not see each other's values. */
  public static ServerProcess memcached(String binary, String memoryMegabytes, Path log)
      throws IOException, InterruptedException {
    return memcached(binary, memoryMegabytes, log, ServerProcess::freePort);
  }

  /** {@link #memcached(String, String, Path)} on the ports {@code ports} gives, one per attempt. */
  static ServerProcess memcached(String binary, String memoryMegabytes, Path log, IntSupplier ports)
      throws IOException, InterruptedException {
    return start(
        "memcached",
        port -> {
          List<String> command =
              new ArrayList<>(
                  List.of(
                      binary,
                      "-l",
                      "127.0.0.1",
                      "-p",
                      String.valueOf(port),
                      "-U",
                      "0",
                      "-m",
                      memoryMegabytes));
          if ("root".equals(System.getProperty("user.name"))) {
            // memcached refuses to run as root unless told which user to be
            command.addAll(List.of("-u", "root"));
          }
          return command;
        },
        log,
        ports);
  }

  /**
   * Starts a server on a port that was free a moment ago. Another process may take that port before the server
   * binds it; the server then exits, and whatever answers on the port is not it. So a start counts only once the
   * server that answers gives this process's pid in its {@code stats} (both servers do), and one that exits during
   * start-up is started again on another port.
   */
  private static ServerProcess start(
      String kind, IntFunction<List<String>> command, Path log, IntSupplier ports)
      throws IOException, InterruptedException {
    for (int attempt = 1; ; attempt++) {
      int port = ports.getAsInt();
      Process process =
          new ProcessBuilder(command.apply(port))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      ServerProcess server = new ServerProcess(kind + ":" + port, process, port);
      if (server.awaitItsOwnAnswer(log)) {
        return server;
      }
      if (attempt == START_ATTEMPTS) {
        throw new IOException(
            server
                + " exited with "
                + process.exitValue()
                + " during start-up, as did the "
                + (START_ATTEMPTS - 1)
                + " attempts before it on other ports; see "
                + log);
      }
    }
  }

  /**
   * Waits until this process answers {@code stats} on its port.
   *
   * @return false if the process exited first (its port was taken, or it failed for another reason: see the log)
   * @throws IOException if it neither answers nor exits within {@link #START_TIMEOUT_MILLIS}
   */
  private boolean awaitItsOwnAnswer(Path log) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
    while (!answersAsItself()) {
      if (!process.isAlive()) {
        return false;
      }
      if (System.currentTimeMillis() > deadline) {
        close();
        throw new IOException(
            name + " did not answer within " + START_TIMEOUT_MILLIS + " ms; see " + log);
      }
      Thread.sleep(100);
    }
    return true;
  }

  /** The process id, to read its CPU time from /proc. */
  public long pid() {
    return process.pid();
  }

  /** {@code 127.0.0.1:<port>}, as the bindings' server lists take it. */
  public String address() {
    return "127.0.0.1:" + port;
  }

  /** The numeric {@code STAT} lines of the server's {@code stats} reply. */
  public Map<String, Long> stats() throws IOException {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      out.write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      Map<String, Long> stats = new HashMap<>();
      for (String line = in.readLine(); line != null && !line.equals("END"); line = in.readLine()) {
        String[] parts = line.split(" ");
        if (parts.length == 3 && parts[0].equals("STAT") && parts[2].matches("-?\\d+")) {
          stats.put(parts[1], Long.parseLong(parts[2]));
        }
      }
      return stats;
    }
  }

  private boolean answersAsItself() {
    try {
      return Long.valueOf(process.pid()).equals(stats().get("pid"));
    } catch (IOException notYet) {
      return false;
    }
  }

  /** Stops the process (SIGTERM, then SIGKILL after 10 s). */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return name;
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free loopback port", e);
    }
  }
}
