package io.dendrite.iq.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A raw-socket connection for protocol tests. {@link #call} sends one request (lines separated by
 * {@code \n} in the test source are sent as {@code \r\n}) and reads exactly one complete reply,
 * returned with {@code \n} line ends so expectations read like the reference traces.
 */
final class TestConnection implements AutoCloseable {

  private static final Pattern LAST_NUMBER = Pattern.compile("(\\d+)\\s*$", Pattern.MULTILINE);

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  TestConnection(int port) {
    try {
      socket = new Socket("127.0.0.1", port);
      socket.setSoTimeout(5_000);
      socket.setTcpNoDelay(true);
      in = socket.getInputStream();
      out = socket.getOutputStream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A connection to {@code port} logged in as {@code user} (memcached's login: a set of "user password"). */
  static TestConnection loggedIn(int port, String user, String password) {
    TestConnection c = new TestConnection(port);
    String login = user + " " + password;
    String reply = c.call("set login 0 0 " + login.length() + "\n" + login);
    if (!reply.equals("STORED\n")) {
      c.close();
      throw new AssertionError("login as " + user + " refused: " + reply);
    }
    return c;
  }

  /**
   * Sends {@code pready} to the server on {@code port}: from then on its {@code <p>} reports the pending markers it
   * holds (none on a fresh server: 0, as in IQ-Twemcached's replies) instead of "maybe" (1) for every key. For tests
   * of other rules, whose expected replies are IQ-Twemcached's.
   */
  static void markersReady(int port) {
    try (TestConnection c = new TestConnection(port)) {
      String reply = c.call("pready");
      if (!reply.equals("OK\n")) {
        throw new AssertionError("pready refused: " + reply);
      }
    }
  }

  /** Sends a request and returns its reply, which ends with {@code END} or is a single line. */
  String call(String request) {
    send(request);
    return readReply(request.startsWith("gets "), false);
  }

  /** Like {@link #call} for replies that always end with {@code END} (batch commands). */
  String callUntilEnd(String request) {
    send(request);
    return readReply(false, true);
  }

  void send(String request) {
    sendRaw((request.replace("\n", "\r\n") + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
  }

  void sendRaw(byte[] bytes) {
    try {
      out.write(bytes);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The token in a lease reply: field 4 of {@code LEASE <key> <flags> <p> <tok> <bytes>}, otherwise
   * the last number on the first line.
   */
  static long token(String reply) {
    String first = reply.lines().findFirst().orElse("");
    String[] fields = first.split(" ");
    if (first.startsWith("LEASE ") && fields.length == 6) {
      return Long.parseLong(fields[4]);
    }
    Matcher m = LAST_NUMBER.matcher(first);
    if (!m.find()) {
      throw new AssertionError("no token in " + reply);
    }
    return Long.parseLong(m.group(1));
  }

  String readReply(boolean casHeaders, boolean untilEnd) {
    StringBuilder reply = new StringBuilder();
    while (true) {
      String line = readLine();
      reply.append(line).append('\n');
      String[] fields = line.split(" ");
      if ((line.startsWith("VALUE ") || line.startsWith("LEASE ")) && fields.length >= 4) {
        int length = Integer.parseInt(fields[casHeaders ? 3 : fields.length - 1]);
        reply.append(
            new String(readBytes(length + 2), StandardCharsets.ISO_8859_1).replace("\r\n", "\n"));
        continue;
      }
      if (line.equals("END")) {
        return reply.toString();
      }
      boolean continues =
          untilEnd
              || line.isEmpty()
              || line.startsWith("VALUE ")
              || line.startsWith("LVALUE ")
              || line.startsWith("NOVALUE")
              || line.startsWith("STAT ")
              || line.startsWith("RETRY ")
              || (line.startsWith("LEASE ") && fields.length >= 3);
      if (!continues) {
        return reply.toString();
      }
    }
  }

  String readLine() {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    try {
      int previous = -1;
      while (true) {
        int b = in.read();
        if (b < 0) {
          throw new IOException(
              "connection closed after: " + line.toString(StandardCharsets.ISO_8859_1));
        }
        if (b == '\n' && previous == '\r') {
          byte[] bytes = line.toByteArray();
          return new String(bytes, 0, bytes.length - 1, StandardCharsets.ISO_8859_1);
        }
        line.write(b);
        previous = b;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private byte[] readBytes(int n) {
    try {
      return in.readNBytes(n);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
