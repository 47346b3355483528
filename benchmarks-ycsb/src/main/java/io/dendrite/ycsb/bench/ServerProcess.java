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

/**
 * A cache server the runner starts as a child process on a free loopback port for one run (an IQ
 * server or Debian's memcached), asks for its {@code stats}, and stops again.
 */
public final class ServerProcess implements AutoCloseable {

  private static final long START_TIMEOUT_MILLIS = 60_000;

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
    int port = freePort();
    return start(
        "iq-server:" + port,
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
        port,
        log);
  }

  /** A memcached process with its own empty cache, so look-aside runs do not see each other's values. */
  public static ServerProcess memcached(String binary, String memoryMegabytes, Path log)
      throws IOException, InterruptedException {
    int port = freePort();
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
      command.addAll(
          List.of("-u", "root")); // memcached refuses to run as root unless told which user to be
    }
    return start("memcached:" + port, command, port, log);
  }

  private static ServerProcess start(String name, List<String> command, int port, Path log)
      throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    ServerProcess server = new ServerProcess(name, process, port);
    long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
    while (!server.answers()) {
      if (!process.isAlive()) {
        throw new IOException(
            name + " exited with " + process.exitValue() + " during start-up; see " + log);
      }
      if (System.currentTimeMillis() > deadline) {
        server.close();
        throw new IOException(
            name + " did not answer within " + START_TIMEOUT_MILLIS + " ms; see " + log);
      }
      Thread.sleep(100);
    }
    return server;
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

  private boolean answers() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
      return true;
    } catch (IOException e) {
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
