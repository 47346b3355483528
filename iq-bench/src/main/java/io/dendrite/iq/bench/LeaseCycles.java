package io.dendrite.iq.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * The lease path of two IQ server processes side by side, for a change to that path (e.g. one build against the
 * previous): rounds alternate between the servers (ABBA order), each running {@value #THREADS} connections of
 * synchronous lease cycles for a few seconds. A cycle is six commands on one key: {@code iqget} (a miss, an I lease),
 * {@code iqset} (the fill), {@code qaread} (a Q lease), {@code swap}, {@code commit} and {@code delete}. Reported:
 * cycles per second and the server's CPU per cycle ({@link ProcCpu}), and their ratios B/A.
 *
 * <pre>
 * java -cp iq-bench/target/iq-bench.jar io.dendrite.iq.bench.LeaseCycles A-port A-pid B-port B-pid [rounds] [seconds]
 * </pre>
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "LeaseCycles",
    description = "The lease path of two IQ server processes side by side, rounds alternating.")
public final class LeaseCycles implements Callable<Integer> {
  private static final int THREADS = 4;
  private static final int KEYS_PER_THREAD = 5_000;

  @Parameters(index = "0", paramLabel = "A-port", description = "server A's port on 127.0.0.1")
  private int portA;

  @Parameters(index = "1", paramLabel = "A-pid", description = "server A's process id")
  private long pidA;

  @Parameters(index = "2", paramLabel = "B-port", description = "server B's port on 127.0.0.1")
  private int portB;

  @Parameters(index = "3", paramLabel = "B-pid", description = "server B's process id")
  private long pidB;

  @Parameters(
      index = "4",
      arity = "0..1",
      paramLabel = "rounds",
      defaultValue = "12",
      description = "rounds, each running both servers (default ${DEFAULT-VALUE})")
  private int rounds;

  @Parameters(
      index = "5",
      arity = "0..1",
      paramLabel = "seconds",
      defaultValue = "6",
      description = "seconds per server and round (default ${DEFAULT-VALUE})")
  private int seconds;

  private LeaseCycles() {}

  public static void main(String[] args) {
    System.exit(new CommandLine(new LeaseCycles()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    int[] ports = {portA, portB};
    long[] pids = {pidA, pidB};
    run(ports[0], 3, 1_000);
    run(ports[1], 3, 1_000); // unmeasured warm-up of both
    long[] cycles = new long[2];
    long[] ticks = new long[2];
    for (int round = 0; round < rounds; round++) {
      for (int step = 0; step < 2; step++) {
        int server = round % 2 == 0 ? step : 1 - step;
        long before = ticksOf(pids[server]);
        long done = run(ports[server], seconds, round * THREADS);
        ticks[server] += ticksOf(pids[server]) - before;
        cycles[server] += done;
      }
    }
    double ticksPerSecond = ProcCpu.clockTicksPerSecond().orElse(100); // Linux's USER_HZ is 100
    for (int server = 0; server < 2; server++) {
      System.out.printf(
          "%s: %.0f cycles/s, %.1f us server CPU per cycle%n",
          server == 0 ? "A" : "B",
          cycles[server] / (double) (rounds * seconds),
          ticks[server] * 1e6 / ticksPerSecond / cycles[server]);
    }
    System.out.printf(
        "B/A: throughput %.3f, server CPU per cycle %.3f%n",
        cycles[1] / (double) cycles[0],
        (ticks[1] / (double) cycles[1]) / (ticks[0] / (double) cycles[0]));
    return CommandLine.ExitCode.OK;
  }

  private static long ticksOf(long pid) {
    return ProcCpu.processTicks(pid)
        .orElseThrow(() -> new IllegalStateException("cannot read /proc/" + pid + "/stat"));
  }

  private static long run(int port, int seconds, int firstThread) throws InterruptedException {
    AtomicLong cycles = new AtomicLong();
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      int thread = firstThread + t;
      Thread worker =
          new Thread(
              () -> {
                try (Socket socket = new Socket("127.0.0.1", port)) {
                  socket.setTcpNoDelay(true);
                  cycle(socket, thread, end, cycles);
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              });
      threads.add(worker);
      worker.start();
    }
    for (Thread worker : threads) {
      worker.join();
    }
    return cycles.get();
  }

  private static void cycle(Socket socket, int thread, long end, AtomicLong cycles)
      throws IOException {
    OutputStream out = new BufferedOutputStream(socket.getOutputStream());
    InputStream in = new BufferedInputStream(socket.getInputStream());
    String tid = "T" + thread;
    for (long i = 0; System.nanoTime() < end; i++) {
      String key = "k" + thread + "_" + (i % KEYS_PER_THREAD);
      send(out, "iqget " + key + " 0\r\n");
      String reply = line(in);
      if (reply.startsWith("LVALUE")) {
        long token = lastNumber(reply);
        line(in); // END
        if (token > 3) {
          send(out, "iqset " + key + " 0 0 5 " + token + "\r\nvalue\r\n");
          line(in);
        }
      } else {
        while (!reply.equals("END")) {
          reply = line(in);
        }
      }
      send(out, "qaread " + key + " 0 " + tid + "\r\n");
      reply = line(in);
      long token =
          reply.startsWith("LEASE") ? Long.parseLong(reply.split(" ")[4]) : lastNumber(reply);
      line(in); // the value, or the empty line of a miss
      line(in); // END
      send(
          out,
          "swap "
              + key
              + " 0 0 6 "
              + token
              + "\r\nvalue2\r\ncommit "
              + tid
              + " 0\r\ndelete "
              + key
              + "\r\n");
      line(in);
      line(in);
      line(in);
      cycles.incrementAndGet();
    }
  }

  private static void send(OutputStream out, String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  private static long lastNumber(String line) {
    String[] words = line.trim().split(" +");
    return Long.parseLong(words[words.length - 1]);
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int previous = -1;
    for (int c; (c = in.read()) >= 0; previous = c) {
      if (c == '\n' && previous == '\r') {
        line.setLength(line.length() - 1);
        return line.toString();
      }
      line.append((char) c);
    }
    throw new EOFException("the server closed the connection");
  }
}
