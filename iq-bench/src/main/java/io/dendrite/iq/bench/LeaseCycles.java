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
import java.util.concurrent.atomic.AtomicLong;

/**
 * The lease path of two IQ server processes side by side, for a change to that path (e.g. one build against the
 * previous): rounds alternate between the servers (ABBA order), each running {@value #THREADS} connections of
 * synchronous lease cycles for a few seconds. A cycle is six commands on one key: {@code iqget} (a miss, an I lease),
 * {@code iqset} (the fill), {@code qaread} (a Q lease), {@code swap}, {@code commit} and {@code delete}. Reported:
 * cycles per second and the server's CPU per cycle ({@link ServerCpu}), and their ratios B/A.
 *
 * <pre>
 * java -cp iq-bench/target/iq-bench.jar io.dendrite.iq.bench.LeaseCycles A-port A-pid B-port B-pid [rounds] [seconds]
 * </pre>
 */
public final class LeaseCycles {
  private static final int THREADS = 4;
  private static final int KEYS_PER_THREAD = 5_000;

  private LeaseCycles() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      System.err.println("usage: LeaseCycles A-port A-pid B-port B-pid [rounds 12] [seconds 6]");
      System.exit(2);
    }
    int[] ports = {Integer.parseInt(args[0]), Integer.parseInt(args[2])};
    long[] pids = {Long.parseLong(args[1]), Long.parseLong(args[3])};
    int rounds = args.length > 4 ? Integer.parseInt(args[4]) : 12;
    int seconds = args.length > 5 ? Integer.parseInt(args[5]) : 6;
    run(ports[0], 3, 1_000);
    run(ports[1], 3, 1_000); // unmeasured warm-up of both
    long[] cycles = new long[2];
    long[] ticks = new long[2];
    for (int round = 0; round < rounds; round++) {
      for (int step = 0; step < 2; step++) {
        int server = round % 2 == 0 ? step : 1 - step;
        long before = ServerCpu.ticksOfProcess(pids[server]);
        long done = run(ports[server], seconds, round * THREADS);
        ticks[server] += ServerCpu.ticksOfProcess(pids[server]) - before;
        cycles[server] += done;
      }
    }
    double ticksPerSecond = 100; // USER_HZ on Linux
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
