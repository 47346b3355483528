package io.dendrite.writeback;

import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.server.PortFile;
import io.dendrite.testsupport.faults.ChildJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * An IQ server in a process of its own ({@code IqServerMain} on the test class path), so that a test can lose it
 * the way a machine is lost: SIGKILL, no goodbye on its connections, its pinned values gone.
 */
public final class IqServerProcess implements AutoCloseable {
  private final ChildJvm jvm;
  private final ServerAddress address;
  private final long leaseMillis;
  private final long handoverMillis;

  private IqServerProcess(
      ChildJvm jvm, ServerAddress address, long leaseMillis, long handoverMillis) {
    this.jvm = jvm;
    this.address = address;
    this.leaseMillis = leaseMillis;
    this.handoverMillis = handoverMillis;
  }

  /** Starts a server on an ephemeral loopback port and waits until it listens. */
  public static IqServerProcess start(long leaseMillis) {
    return start(leaseMillis, 10_000, 0);
  }

  /** {@link #start(long)}, handing over for {@code handoverMillis} when it is {@link #terminate}d with pinned items. */
  public static IqServerProcess start(long leaseMillis, long handoverMillis) {
    return start(leaseMillis, handoverMillis, 0);
  }

  private static IqServerProcess start(long leaseMillis, long handoverMillis, int port) {
    Path portFile = newPortFile();
    ChildJvm jvm =
        ChildJvm.start(
            "io.dendrite.iq.server.IqServerMain",
            List.of("-Xmx128m"),
            List.of(
                "--port",
                String.valueOf(port),
                "--port-file",
                portFile.toString(),
                "--pinned-memory",
                "64m",
                "--lease-ms",
                String.valueOf(leaseMillis),
                "--handover-ms",
                String.valueOf(handoverMillis)));
    try {
      int bound = PortFile.await(portFile, Duration.ofSeconds(30), jvm::isAlive);
      return new IqServerProcess(
          jvm, new ServerAddress("127.0.0.1", bound), leaseMillis, handoverMillis);
    } catch (IOException | InterruptedException failed) {
      jvm.close();
      if (failed instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException(
          failed.getMessage() + "; its output ended with:\n" + jvm.tail(), failed);
    } catch (RuntimeException
        | Error failed) { // an Error too: a server left running outlives the test run
      jvm.close();
      throw failed;
    } finally {
      deletePortFile(portFile);
    }
  }

  /** A path in a new folder of its own for the child's --port-file: nothing stale can be there. */
  private static Path newPortFile() {
    try {
      return Files.createTempDirectory("iq-server-").resolve("port");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void deletePortFile(Path portFile) {
    try {
      Files.deleteIfExists(portFile);
      Files.deleteIfExists(portFile.getParent());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * SIGKILLs this server and starts a new, empty one on the same address, as a rolling restart of the cache tier or
   * a replaced machine does; returns the new one.
   */
  public IqServerProcess restartEmpty() {
    kill();
    jvm.close();
    return start(leaseMillis, handoverMillis, address.port());
  }

  public ServerAddress address() {
    return address;
  }

  /** SIGKILL: the server and every value it held are gone. */
  public void kill() {
    jvm.kill();
  }

  /** SIGTERM, as a service manager stops it: it hands over first (see {@code --handover-ms}) and then stops. */
  public void terminate() {
    jvm.terminate(Duration.ofMillis(handoverMillis).plusSeconds(30));
  }

  /** SIGSTOP: the server stalls with its connections open, as in a long pause; see {@link ChildJvm#pause()}. */
  public void pause() {
    jvm.pause();
  }

  /** SIGCONT: the stalled server answers again, starting with what queued up while it was stopped. */
  public void resume() {
    jvm.resume();
  }

  @Override
  public void close() {
    jvm.close();
  }
}
