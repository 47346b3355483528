package io.dendrite.iq.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Replies are paired with requests by position, so a server that answers a request more than once, or takes a
 * request's data for commands of their own, shifts every later reply onto the wrong request. The client must never
 * hand such a reply to a request: it fails every request still on that connection instead. The servers here are
 * stubs that misbehave on purpose.
 */
class StrayReplyTest {
  private static final int GETS = 200;

  private StubServer stub;
  private IqClient client;

  @AfterEach
  void stop() throws IOException {
    if (client != null) {
      client.close();
    }
    if (stub != null) {
      stub.close();
    }
  }

  @Test
  void aServerThatAnswersEveryRequestTwiceNeverGetsAReplyDeliveredToTheWrongKey() throws Exception {
    stub = new StubServer(true);
    for (int i = 0; i < GETS; i++) {
      stub.values.put("k" + i, "v" + i);
    }
    client = IqClient.builder().servers("127.0.0.1:" + stub.port()).build();
    List<CompletableFuture<Optional<CacheValue>>> gets = new ArrayList<>();
    for (int i = 0; i < GETS; i++) {
      gets.add(client.getAsync("k" + i));
    }
    int delivered = 0;
    int failed = 0;
    for (int i = 0; i < GETS; i++) {
      try {
        Optional<CacheValue> value = gets.get(i).join();
        assertThat(value).as("k%d", i).isPresent();
        assertThat(value.get().key()).isEqualTo("k" + i);
        assertThat(value.get().text()).as("the value of k%d", i).isEqualTo("v" + i);
        delivered++;
      } catch (CompletionException e) {
        assertThat(e.getCause()).isInstanceOf(IqConnectionException.class);
        assertThat(e.getCause()).hasStackTraceContaining("cannot be paired");
        failed++;
      }
    }
    assertThat(delivered).as("the first reply is the first request's").isGreaterThanOrEqualTo(1);
    assertThat(failed).as("the rest fail rather than take a shifted reply").isPositive();
  }

  @Test
  void appendAllFallsBackToSingleAppendsOnAServerWithoutMappendAndNothingTakesItsStrayReplies()
      throws Exception {
    stub = new StubServer(false);
    stub.values.put("other", "o");
    client = IqClient.builder().servers("127.0.0.1:" + stub.port()).build();
    ExecutorService readers = Executors.newFixedThreadPool(4);
    try {
      List<CompletableFuture<Optional<CacheValue>>> gets = new ArrayList<>();
      CompletableFuture<Outcome> appended =
          CompletableFuture.supplyAsync(
              () ->
                  client.appendAll("log", List.of(bytes("a\n"), bytes("b\n"), bytes("c\n")), true),
              readers);
      for (int i = 0; i < GETS; i++) {
        gets.add(client.getAsync("other"));
      }
      assertThat(appended.join()).isEqualTo(Outcome.OK);
      for (CompletableFuture<Optional<CacheValue>> get : gets) {
        try {
          assertThat(get.join()).map(CacheValue::text).hasValue("o");
        } catch (CompletionException e) {
          assertThat(e.getCause()).isInstanceOf(IqConnectionException.class);
        }
      }
      assertThat(client.get("log")).map(CacheValue::text).hasValue("a\nb\nc\n");
      assertThat(client.appendAll("log", List.of(bytes("d\n")), true)).isEqualTo(Outcome.OK);
      assertThat(client.get("log")).map(CacheValue::text).hasValue("a\nb\nc\nd\n");
      assertThat(stub.mappends).as("asked once, then remembered").isEqualTo(1);
    } finally {
      readers.shutdownNow();
    }
  }

  @Test
  void anErrorToARequestThatCarriedDataFailsTheRequestsBehindIt() throws Exception {
    stub = new StubServer(false);
    stub.values.put("other", "o");
    client = IqClient.builder().servers("127.0.0.1:" + stub.port()).build();
    CompletableFuture<Outcome> unknown =
        client.setAsync("x", bytes("one\r\ntwo"), WriteOptions.DEFAULT); // the stub has no set
    CompletableFuture<Optional<CacheValue>> behind = client.getAsync("other");
    assertThatThrownBy(unknown::join).hasCauseInstanceOf(IqException.class);
    try {
      assertThat(behind.join()).map(CacheValue::text).hasValue("o");
    } catch (CompletionException e) {
      assertThat(e.getCause()).isInstanceOf(IqConnectionException.class);
    }
    assertThat(client.get("other")).map(CacheValue::text).hasValue("o");
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A memcached-like stub: {@code gets}/{@code get}, {@code append}, {@code add}; anything else is an unknown
   * command answered {@code ERROR} without reading its data, as memcached and IQ-Twemcached do, so each line of the
   * data is then answered {@code ERROR} too. With {@code twice}, every reply is sent two times.
   */
  private static final class StubServer implements AutoCloseable {
    final Map<String, String> values = new ConcurrentHashMap<>();
    volatile int mappends;
    private final boolean twice;
    private final ServerSocket socket;
    private final List<Socket> accepted = new ArrayList<>();
    private final Thread acceptor;

    StubServer(boolean twice) throws IOException {
      this.twice = twice;
      this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      this.acceptor = new Thread(this::acceptAll, "stub-acceptor");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    private void acceptAll() {
      try {
        while (true) {
          Socket connection = socket.accept();
          synchronized (accepted) {
            accepted.add(connection);
          }
          Thread serving = new Thread(() -> serve(connection), "stub-connection");
          serving.setDaemon(true);
          serving.start();
        }
      } catch (IOException closed) {
        // stopped
      }
    }

    private void serve(Socket connection) {
      try (InputStream in = new BufferedInputStream(connection.getInputStream());
          OutputStream out = connection.getOutputStream()) {
        String line;
        while ((line = readLine(in)) != null) {
          String reply = answer(line, in);
          out.write((twice ? reply + reply : reply).getBytes(StandardCharsets.UTF_8));
          out.flush();
        }
      } catch (IOException closed) {
        // the client went away
      }
    }

    private String answer(String line, InputStream in) throws IOException {
      String[] words = line.split(" ");
      switch (words[0]) {
        case "get", "gets" -> {
          StringBuilder reply = new StringBuilder();
          for (int i = 1; i < words.length; i++) {
            String value = values.get(words[i]);
            if (value != null) {
              reply.append("VALUE ").append(words[i]).append(" 0 ").append(value.length());
              reply.append(words[0].equals("gets") ? " 1" : "").append("\r\n");
              reply.append(value).append("\r\n");
            }
          }
          return reply.append("END\r\n").toString();
        }
        case "append", "add" -> {
          String data = readData(in, Integer.parseInt(words[4]));
          String key = words[1];
          if (words[0].equals("add")) {
            return values.putIfAbsent(key, data) == null ? "STORED\r\n" : "NOT_STORED\r\n";
          }
          return values.computeIfPresent(key, (k, v) -> v + data) != null
              ? "STORED\r\n"
              : "NOT_STORED\r\n";
        }
        case "mappend" -> {
          mappends++;
          return "ERROR\r\n";
        }
        default -> {
          return "ERROR\r\n";
        }
      }
    }

    private static String readData(InputStream in, int length) throws IOException {
      byte[] data = in.readNBytes(length + 2);
      return new String(data, 0, length, StandardCharsets.UTF_8);
    }

    private static String readLine(InputStream in) throws IOException {
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      int b;
      while ((b = in.read()) != -1) {
        if (b == '\n') {
          byte[] bytes = line.toByteArray();
          int length =
              bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
          return new String(bytes, 0, length, StandardCharsets.UTF_8);
        }
        line.write(b);
      }
      return null;
    }

    @Override
    public void close() throws IOException {
      socket.close();
      synchronized (accepted) {
        for (Socket connection : accepted) {
          connection.close();
        }
      }
    }
  }
}
