package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Throws 10⁶ random and mutated request lines at the server over four connections at once (truncated commands,
 * missing and extra words, huge and non-numeric lengths, binary garbage, oversized keys) and then checks that the
 * server still answers on each of those connections and on a new one, serves correct data, and has kept no lease,
 * transaction or session state once the lease lifetime has passed.
 */
class ProtocolFuzzIT {

  private static final int CONNECTIONS = 4;
  private static final int LINES_PER_CONNECTION = 250_000;
  private static final int MAX_ITEM = 4096;
  private static final List<String> COMMANDS =
      List.of(
          "get",
          "gets",
          "set",
          "add",
          "replace",
          "append",
          "prepend",
          "cas",
          "delete",
          "incr",
          "decr",
          "touch",
          "flush_all",
          "stats",
          "version",
          "verbosity",
          "iqget",
          "iqset",
          "unlease",
          "qareg",
          "dar",
          "qaread",
          "swap",
          "sar",
          "commit",
          "release",
          "iqappend",
          "iqprepend",
          "iqincr",
          "iqdecr",
          "ciget",
          "cogets",
          "oqread",
          "oqswap",
          "oqwrite",
          "oqadd",
          "oqappend",
          "oqprepend",
          "oqincr",
          "oqdecr",
          "oqreg",
          "oqappends",
          "oqswaps",
          "validate",
          "dcommit",
          "dabort",
          "counlease",
          "unpin",
          "mappend",
          "pmark",
          "pready",
          "check",
          "ftrans",
          "getprik",
          "oqappend2");

  /** Each connection's thread draws from its own generator, seeded by its index: runs repeat. */
  private static final ThreadLocal<Random> RANDOM = new ThreadLocal<>();

  private static Random random() {
    return RANDOM.get();
  }

  @Test
  void serverSurvivesGarbageAndStaysInStep() throws Exception {
    IqServerConfig config =
        IqServerConfig.builder()
            .port(0)
            .maxItemSize(MAX_ITEM)
            .memoryBytes(4L << 20)
            .pinnedMemoryBytes(1L << 20)
            .leaseLifetime(Duration.ofMillis(500))
            .build();
    try (IqServer server = IqServer.start(config)) {
      ExecutorService connections = Executors.newFixedThreadPool(CONNECTIONS);
      try {
        List<Future<?>> fuzzed = new ArrayList<>();
        for (int c = 0; c < CONNECTIONS; c++) {
          int index = c;
          fuzzed.add(
              connections.submit(
                  () -> {
                    RANDOM.set(new Random(20_240_611L + index));
                    fuzzOneConnection(server, index);
                    return null;
                  }));
        }
        for (Future<?> connection : fuzzed) {
          connection.get(240, TimeUnit.SECONDS);
        }
      } finally {
        connections.shutdownNow();
      }

      try (TestConnection fresh = new TestConnection(server.port())) {
        assertThat(fresh.call("version")).startsWith("VERSION ");
        assertThat(fresh.call("set after 0 0 3\nabc")).isEqualTo("STORED\n");
        assertThat(fresh.call("get after")).isEqualTo("VALUE after 0 3\nabc\nEND\n");
        // Lease, transaction and session state lapses with the lease lifetime: nothing leaks.
        Thread.sleep(3 * config.leaseLifetime().toMillis());
        // A delayed flush_all the fuzz left pending stays charged until it runs or is replaced: one
        // now ends it.
        assertThat(fresh.call("flush_all")).isEqualTo("OK\n");
        String stats = fresh.call("stats");
        assertThat(statValue(stats, "curr_leases")).isZero();
        assertThat(statValue(stats, "curr_transactions")).isZero();
        assertThat(statValue(stats, "curr_sessions")).isZero();
        assertThat(statValue(stats, "held_bytes"))
            .as("every lease, staged value and record credited back to its client")
            .isZero();
        assertThat(statValue(stats, "unpinned_bytes")).isLessThanOrEqualTo(config.memoryBytes());
        assertThat(statValue(stats, "pinned_bytes") + statValue(stats, "pending_marker_bytes"))
            .as("pinned items and pending markers share the pinned memory")
            .isLessThanOrEqualTo(config.pinnedMemoryBytes());
      }
    }
  }

  /**
   * {@value #LINES_PER_CONNECTION} lines on one fresh connection, then the check that it is back in step: a store
   * and read of its own key, then {@code version}.
   */
  private void fuzzOneConnection(IqServer server, int index) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout(120_000);
      OutputStream out = socket.getOutputStream();
      String key = "fuzz-final-" + index;
      ReplyScanner scanner =
          new ReplyScanner(socket.getInputStream(), "VALUE " + key + " 0 5\r\nhello\r\nEND\r\n");
      Thread reader = new Thread(scanner, "fuzz-reader-" + index);
      reader.start();

      ByteArrayOutputStream batch = new ByteArrayOutputStream();
      for (int i = 0; i < LINES_PER_CONNECTION; i++) {
        batch.write(nextRequest());
        if (batch.size() > 64 * 1024) {
          out.write(batch.toByteArray());
          batch.reset();
        }
      }
      out.write(batch.toByteArray());
      // Whatever state the last request left (a block being read or skipped), this padding
      // completes it, ends in one over-long line that is skipped, and the check follows.
      byte[] padding = new byte[2 * 16 * MAX_ITEM + 256 * 1024];
      Arrays.fill(padding, (byte) ' ');
      out.write(padding);
      out.write(
          ("\r\nset " + key + " 0 0 5\r\nhello\r\nget " + key + "\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(scanner.found.await(180, TimeUnit.SECONDS))
          .as("connection %d back in step", index)
          .isTrue();

      out.write("version\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(scanner.versionAfterFinal.await(10, TimeUnit.SECONDS))
          .as("connection %d answers version", index)
          .isTrue();
      socket.close();
      reader.join(5_000);
    }
  }

  private static final int KEY_POOL = 40;
  private static final int ID_POOL = 10;

  private byte[] nextRequest() {
    int kind = random().nextInt(10);
    String line;
    if (kind < 4) {
      line = validRequest();
    } else if (kind < 8) {
      line = mutate(validRequest());
    } else if (kind < 9) {
      byte[] garbage = new byte[random().nextInt(200)];
      random().nextBytes(garbage);
      return garbage;
    } else {
      line =
          COMMANDS.get(random().nextInt(COMMANDS.size()))
              + " "
              + "K".repeat(200 + random().nextInt(200))
              + " 0 0 "
              + random().nextInt(8)
              + "\r\n"
              + "abcdefgh".substring(0, random().nextInt(8));
    }
    return (line + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
  }

  private String validRequest() {
    String command = COMMANDS.get(random().nextInt(COMMANDS.size()));
    String key = "k" + random().nextInt(KEY_POOL);
    String id = "T" + random().nextInt(ID_POOL);
    String number = Integer.toString(random().nextInt(20));
    int length = random().nextInt(12);
    String data = "\r\n" + "0123456789ab".substring(0, length);
    return switch (command) {
      case "set", "add", "replace", "append", "prepend" ->
          command + " " + key + " 0 0 " + length + " " + random().nextInt(2) + data;
      case "cas" -> command + " " + key + " 0 0 " + length + " " + number + data;
      case "iqset", "sar" -> command + " " + key + " 0 0 " + length + " " + number + data;
      case "swap" ->
          command + " " + key + " 0 0 " + length + " " + number + " " + random().nextInt(2) + data;
      case "iqappend", "iqprepend" -> command + " " + key + " " + length + " " + id + data;
      case "oqswap", "oqwrite", "oqadd" -> command + " " + id + " " + key + " 0 0 " + length + data;
      case "oqappend", "oqprepend" -> command + " " + id + " " + key + " " + length + data;
      case "oqappends", "oqswaps" -> command + " " + id + " " + key + " 0 0 " + length + data;
      case "mappend" -> command + " " + key + " " + random().nextInt(2) + " " + length + data;
      case "iqget", "qaread" -> command + " " + key + " " + number + " " + id;
      case "iqincr", "iqdecr" -> command + " " + key + " " + number + " " + id;
      case "qareg" -> command + " " + key + " " + id;
      case "ciget" -> command + " " + id + " " + key + " " + number;
      case "cogets" ->
          command
              + " "
              + id
              + " "
              + random().nextInt(2)
              + " "
              + key
              + " k"
              + random().nextInt(KEY_POOL);
      case "oqread", "oqreg" -> command + " " + id + " " + key;
      case "oqincr", "oqdecr" -> command + " " + id + " " + key + " " + number;
      case "dar", "commit", "release", "validate", "dcommit", "dabort", "counlease" ->
          command + " " + id + (command.equals("commit") ? " " + random().nextInt(2) : "");
      case "incr", "decr", "touch", "unlease" -> command + " " + key + " " + number;
      default -> command + " " + key;
    };
  }

  /** Truncates, drops, duplicates or replaces words, or sets a huge or non-numeric length. */
  private String mutate(String request) {
    String[] parts = request.split("\r\n", 2);
    String[] words = parts[0].split(" ");
    String data = parts.length > 1 ? "\r\n" + parts[1] : "";
    int i = random().nextInt(words.length);
    switch (random().nextInt(7)) {
      case 0 -> {
        return parts[0].substring(0, random().nextInt(parts[0].length() + 1)) + data;
      }
      case 1 -> words[i] = "";
      case 2 -> words[i] = "99999999999999999999";
      case 3 -> words[i] = Integer.toString(random().nextInt(4 * MAX_ITEM));
      case 4 -> words[i] = "-" + random().nextInt(100);
      case 5 -> words[i] = "x\u0000\u00ff" + words[i];
      default -> words[i] = words[i] + " " + words[random().nextInt(words.length)];
    }
    return String.join(" ", words) + (random().nextBoolean() ? data : "");
  }

  private static long statValue(String stats, String name) {
    return stats
        .lines()
        .filter(l -> l.startsWith("STAT " + name + " "))
        .findFirst()
        .map(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1)))
        .orElseThrow();
  }

  /** Drains replies, watching for the final check's reply and then a VERSION line. */
  private static final class ReplyScanner implements Runnable {
    final CountDownLatch found = new CountDownLatch(1);
    final CountDownLatch versionAfterFinal = new CountDownLatch(1);
    private final InputStream in;
    private final byte[] marker;

    ReplyScanner(InputStream in, String marker) {
      this.in = in;
      this.marker = marker.getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void run() {
      byte[] window = new byte[1 << 16];
      int filled = 0;
      byte[] buffer = new byte[1 << 16];
      try {
        int n;
        while ((n = in.read(buffer)) > 0) {
          if (filled + n > window.length) {
            int keep = Math.min(filled, 256);
            System.arraycopy(window, filled - keep, window, 0, keep);
            filled = keep;
          }
          System.arraycopy(buffer, 0, window, filled, Math.min(n, window.length - filled));
          filled += Math.min(n, window.length - filled);
          String text = new String(window, 0, filled, StandardCharsets.ISO_8859_1);
          int at = text.indexOf(new String(marker, StandardCharsets.ISO_8859_1));
          if (found.getCount() > 0 && at >= 0) {
            found.countDown();
            System.arraycopy(window, at + marker.length, window, 0, filled - at - marker.length);
            filled -= at + marker.length;
            text = new String(window, 0, filled, StandardCharsets.ISO_8859_1);
          }
          if (found.getCount() == 0 && text.contains("VERSION ")) {
            versionAfterFinal.countDown();
          }
        }
      } catch (IOException closed) {
        // The test closed the socket: nothing more to scan.
      }
    }
  }
}
