package io.dendrite.testsupport.cache;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Unmodified memcached processes that a test starts on loopback ports of their own and stops when closed, and one
 * client over them: for code that must work on stock memcached (the shared memcached of {@code dev/services} evicts,
 * and its memory is not the test's to fill). Each runs with {@code -M} (a full server refuses a store instead of
 * evicting) and the memory the test gives it.
 *
 * <p>The binary is found as {@code dev/services} finds it, {@code memcached} on the {@code PATH} (Debian's package
 * {@code memcached}). Without it, {@link #start} fails with a message that says so: a test that needs it must not pass
 * by skipping.
 *
 * <pre>{@code
 * try (StockMemcached memcached = StockMemcached.start(2, 64)) {
 *   memcached.client.set("k", value);
 * }
 * }</pre>
 */
public final class StockMemcached implements AutoCloseable {
  private static final Duration READY_WITHIN = Duration.ofSeconds(20);

  private final Path binary;
  private final int megabytes;
  private final List<Process> processes = new ArrayList<>();
  private final List<ServerAddress> addresses = new ArrayList<>();
  private final List<IqClient> clients = new ArrayList<>();

  /** A client over every server, in start order; closed with the fixture. */
  public final IqClient client;

  private StockMemcached(Path binary, int count, int megabytes) {
    this.binary = binary;
    this.megabytes = megabytes;
    try {
      for (int i = 0; i < count; i++) {
        int port = freePort();
        processes.add(launch(port));
        addresses.add(new ServerAddress("127.0.0.1", port));
      }
    } catch (RuntimeException failed) {
      close();
      throw failed;
    }
    client = anotherClient();
  }

  /**
   * Starts {@code count} memcached servers with {@code -M -m <megabytes>} and waits until each answers.
   *
   * @throws IllegalStateException when no {@code memcached} is on the {@code PATH}, or one does not start
   */
  public static StockMemcached start(int count, int megabytes) {
    return new StockMemcached(binary(), count, megabytes);
  }

  /** Another client over the same servers, as a second process would have; closed with the fixture. */
  public IqClient anotherClient() {
    IqClient another =
        IqClient.builder().servers(addresses).requestTimeout(Duration.ofSeconds(5)).build();
    synchronized (clients) {
      clients.add(another);
    }
    return another;
  }

  /** The servers' addresses, in start order. */
  public List<ServerAddress> addresses() {
    return List.copyOf(addresses);
  }

  /** Kills server {@code index} (SIGKILL) and starts it again, empty, on the same port: a restart. */
  public void restart(int index) {
    Process old = processes.get(index);
    old.destroyForcibly();
    try {
      old.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while restarting memcached", interrupted);
    }
    processes.set(index, launch(addresses.get(index).port()));
  }

  @Override
  public void close() {
    synchronized (clients) {
      clients.forEach(IqClient::close);
    }
    for (Process process : processes) {
      process.destroyForcibly();
    }
  }

  /** {@code memcached} on the {@code PATH}, as {@code dev/services} looks for it ({@code command -v memcached}). */
  private static Path binary() {
    String path = System.getenv().getOrDefault("PATH", "");
    for (String directory : path.split(File.pathSeparator)) {
      if (directory.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(directory, "memcached");
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    throw new IllegalStateException(
        "no memcached on the PATH ("
            + path
            + "): install Debian's memcached (apt-get install memcached, as dev/services does);"
            + " tests of stock memcached need a real one");
  }

  private Process launch(int port) {
    List<String> command =
        List.of(
            binary.toString(),
            "-u",
            System.getProperty("user.name"),
            "-l",
            "127.0.0.1",
            "-p",
            Integer.toString(port),
            "-U",
            "0",
            "-m",
            Integer.toString(megabytes),
            "-M",
            "-t",
            "1",
            "-c",
            "1024");
    Process process;
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start " + command, e);
    }
    long deadline = System.nanoTime() + READY_WITHIN.toNanos();
    while (!answers(port)) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "memcached exited with " + process.exitValue() + " right after " + command);
      }
      if (System.nanoTime() > deadline) {
        process.destroyForcibly();
        throw new IllegalStateException("memcached did not answer within " + READY_WITHIN);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
        throw new IllegalStateException("interrupted while starting memcached", interrupted);
      }
    }
    return process;
  }

  /** Whether a memcached answers {@code version} on {@code port}. */
  private static boolean answers(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      out.write("version\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] reply = new byte[8];
      int read = in.readNBytes(reply, 0, reply.length);
      return new String(reply, 0, read, StandardCharsets.US_ASCII).startsWith("VERSION");
    } catch (IOException notYet) {
      return false;
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
