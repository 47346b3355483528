package io.dendrite.iq.bench;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.WriteOptions;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What {@link IqClient} adds to one synchronous round trip: one thread does {@code get} of a preloaded value
 * through the client, then through a plain blocking socket that writes {@code gets <key>\r\n} and reads the reply
 * up to {@code END\r\n}, against the same server, alternating in rounds so that outside load hits both alike.
 * Prints p50 and p99 of each, the ratio of the p50s (the target: at most 1.3), and the calling thread's CPU time
 * per request, which a busy machine disturbs much less than latency.
 *
 * <pre>
 * java -cp ... io.dendrite.iq.bench.SyncLatency [--server host:port] [--requests 20000] [--rounds 5]
 * </pre>
 * Without {@code --server} an IQ server is started inside this JVM.
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "SyncLatency",
    description = "One thread's synchronous get through IqClient against a plain blocking socket.")
public final class SyncLatency implements Callable<Integer> {

  private static final int[] VALUE_SIZES = {100, 5_000};

  /** Latencies kept to within 0.1 % of their value (three significant digits). */
  private static final int SIGNIFICANT_DIGITS = 3;

  @Option(
      names = "--server",
      paramLabel = "host:port",
      description = "the IQ server (default: one started inside this JVM)")
  private ServerAddress server;

  @Option(
      names = "--requests",
      paramLabel = "N",
      defaultValue = "20000",
      description = "gets per side per round (default ${DEFAULT-VALUE})")
  private int requests;

  @Option(
      names = "--rounds",
      paramLabel = "N",
      defaultValue = "5",
      description = "alternating rounds (default ${DEFAULT-VALUE})")
  private int rounds;

  private SyncLatency() {}

  public static void main(String[] args) {
    System.exit(
        new CommandLine(new SyncLatency())
            .registerConverter(ServerAddress.class, ServerAddress::parse)
            .setOverwrittenOptionsAllowed(true)
            .execute(args));
  }

  @Override
  public Integer call() throws Exception {
    IqServer embedded =
        server == null
            ? IqServer.start(IqServerConfig.builder().port(0).memoryBytes(64L << 20).build())
            : null;
    ServerAddress address =
        server != null ? server : new ServerAddress("127.0.0.1", embedded.port());
    try (IqClient client = IqClient.builder().servers(List.of(address)).build();
        PlainSocket plain = new PlainSocket(address)) {
      System.out.printf(
          "%n| value | IqClient p50 µs | plain socket p50 µs | ratio p50 | IqClient p99 µs "
              + "| plain p99 µs | IqClient CPU µs/request | plain CPU µs/request |%n");
      System.out.printf("|---:|---:|---:|---:|---:|---:|---:|---:|%n");
      for (int size : VALUE_SIZES) {
        String key = "latency:" + size;
        byte[] value = new byte[size];
        Arrays.fill(value, (byte) 'v');
        client.set(key, value, WriteOptions.DEFAULT);
        for (int warmUp = 0; warmUp < 3; warmUp++) {
          measure(() -> client.get(key), requests, new Histogram(SIGNIFICANT_DIGITS));
          measure(() -> plain.get(key, size), requests, new Histogram(SIGNIFICANT_DIGITS));
        }
        Histogram viaClient = new Histogram(SIGNIFICANT_DIGITS);
        Histogram viaSocket = new Histogram(SIGNIFICANT_DIGITS);
        long clientCpu = 0;
        long socketCpu = 0;
        for (int round = 0; round < rounds; round++) {
          clientCpu += measure(() -> client.get(key), requests, viaClient);
          socketCpu += measure(() -> plain.get(key, size), requests, viaSocket);
        }
        double c50 = micros(viaClient, 50);
        double s50 = micros(viaSocket, 50);
        double perRequest = 1_000.0 * requests * rounds;
        System.out.printf(
            Locale.ROOT,
            "| %,d B | %.1f | %.1f | %.2fx | %.1f | %.1f | %.1f | %.1f |%n",
            size,
            c50,
            s50,
            c50 / s50,
            micros(viaClient, 99),
            micros(viaSocket, 99),
            clientCpu / perRequest,
            socketCpu / perRequest);
      }
      System.out.printf(
          Locale.ROOT,
          "%n%d synchronous gets per side per round, %d alternating rounds, one thread,"
              + " server %s.%n",
          requests,
          rounds,
          embedded != null ? "in this JVM" : address);
    } finally {
      if (embedded != null) {
        embedded.close();
      }
    }
    return CommandLine.ExitCode.OK;
  }

  private interface Get {
    Object run() throws IOException;
  }

  /** Records each request's latency in {@code nanos}; returns the calling thread's CPU nanoseconds. */
  private static long measure(Get get, int requests, Histogram nanos) throws IOException {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long cpuAtStart = threads.getCurrentThreadCpuTime();
    for (int i = 0; i < requests; i++) {
      long start = System.nanoTime();
      Object found = get.run();
      nanos.recordValue(System.nanoTime() - start);
      if (found instanceof Optional<?> optional && optional.isEmpty()) {
        throw new IllegalStateException("the preloaded key is gone");
      }
    }
    return threads.getCurrentThreadCpuTime() - cpuAtStart;
  }

  private static double micros(Histogram nanos, double percentile) {
    return nanos.getValueAtPercentile(percentile) / 1_000.0;
  }

  /** The baseline: a blocking socket, one request at a time, reply read until {@code END\r\n}. */
  private static final class PlainSocket implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final byte[] buffer = new byte[64 * 1024];

    PlainSocket(ServerAddress address) throws IOException {
      socket = new Socket(address.host(), address.port());
      socket.setTcpNoDelay(true);
      out = socket.getOutputStream();
      in = socket.getInputStream();
    }

    /** The reply's length; the value is {@code size} bytes, so the reply's end is known from the header on. */
    Object get(String key, int size) throws IOException {
      out.write(("gets " + key + "\r\n").getBytes(StandardCharsets.US_ASCII));
      int read = 0;
      while (read < 5 || !endsWithEnd(read)) {
        int n = in.read(buffer, read, buffer.length - read);
        if (n < 0) {
          throw new IOException("server closed the connection");
        }
        read += n;
      }
      if (read < size) {
        throw new IllegalStateException("short reply: " + read + " bytes");
      }
      return read;
    }

    private boolean endsWithEnd(int read) {
      return buffer[read - 5] == 'E'
          && buffer[read - 4] == 'N'
          && buffer[read - 3] == 'D'
          && buffer[read - 2] == '\r'
          && buffer[read - 1] == '\n';
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
