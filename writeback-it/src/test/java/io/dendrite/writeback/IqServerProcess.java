package io.dendrite.writeback;

import io.dendrite.iq.client.ServerAddress;
import io.dendrite.testsupport.faults.ChildJvm;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An IQ server in a process of its own ({@code IqServerMain} on the test class path), so that a test can lose it
 * the way a machine is lost: SIGKILL, no goodbye on its connections, its pinned values gone.
 */
public final class IqServerProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("IQ server listening on [^ ]+:(\\d+) ");

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
    ChildJvm jvm =
        ChildJvm.start(
            "io.dendrite.iq.server.IqServerMain",
            // The test resources log at WARN; the server's INFO line is how the child reports its
            // port.
            List.of("-Xmx128m", "-Dorg.slf4j.simpleLogger.log.io.dendrite.iq.server.IqServer=info"),
            List.of(
                "--port",
                String.valueOf(port),
                "--pinned-memory",
                "64m",
                "--lease-ms",
                String.valueOf(leaseMillis),
                "--handover-ms",
                String.valueOf(handoverMillis)));
    try {
      Matcher listening =
          LISTENING.matcher(
              jvm.awaitLine(line -> LISTENING.matcher(line).find(), Duration.ofSeconds(30)));
      listening.find();
      return new IqServerProcess(
          jvm,
          new ServerAddress("127.0.0.1", Integer.parseInt(listening.group(1))),
          leaseMillis,
          handoverMillis);
    } catch (RuntimeException
        | Error failed) { // an Error too: a server left running outlives the test run
      jvm.close();
      throw failed;
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
