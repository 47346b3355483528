package io.dendrite.iq.endtoend;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Real embedded IQ servers on loopback for integration tests, and a client over them. The other modules use {@code
 * dendrite-test-support}'s {@code EmbeddedIqServers}; this module cannot, because that fixture is built on this
 * module's server (Maven refuses the cycle even at test scope).
 */
final class IqServers implements AutoCloseable {

  final List<IqServer> servers = new ArrayList<>();
  final IqClient client;

  IqServers(int count) {
    this(count, builder -> builder, config -> config);
  }

  IqServers(
      int count,
      UnaryOperator<IqClient.Builder> clientSettings,
      UnaryOperator<IqServerConfig.Builder> serverSettings) {
    for (int i = 0; i < count; i++) {
      servers.add(
          IqServer.start(
              serverSettings
                  .apply(IqServerConfig.builder().port(0).leaseLifetime(Duration.ofMillis(10_000)))
                  .build()));
    }
    client =
        clientSettings
            .apply(IqClient.builder().servers(addresses()).requestTimeout(Duration.ofSeconds(5)))
            .build();
  }

  List<ServerAddress> addresses() {
    return servers.stream().map(server -> new ServerAddress("127.0.0.1", server.port())).toList();
  }

  /** A key that the ring places on server {@code index}. */
  String keyOn(int index, String prefix) {
    ServerAddress target = addresses().get(index);
    for (int i = 0; ; i++) {
      String key = prefix + i;
      if (client.replicaPlacement().serversFor(key, 1).get(0).equals(target)) {
        return key;
      }
    }
  }

  /** UTF-8 bytes of {@code text}: the values the tests store. */
  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** The {@code stats} of one server, read over a plain socket so that the client under test is not involved. */
  static Map<String, String> stats(ServerAddress address) throws IOException {
    return stats(address, "stats");
  }

  /** {@code stats settings} of one server, as {@link #stats(ServerAddress)}. */
  static Map<String, String> settings(ServerAddress address) throws IOException {
    return stats(address, "stats settings");
  }

  private static Map<String, String> stats(ServerAddress address, String command)
      throws IOException {
    Map<String, String> stats = new HashMap<>();
    for (String line : lines(address, command + "\r\n", "END")) {
      String[] words = line.split(" ", 3);
      stats.put(words[1], words.length > 2 ? words[2] : "");
    }
    return stats;
  }

  /**
   * Sends {@code requests} (raw bytes, lines ending in CRLF) over a plain socket and returns the reply lines up to
   * the line {@code last}, which is left out: for what the client under test would never send.
   */
  static List<String> lines(ServerAddress address, String requests, String last)
      throws IOException {
    try (Socket socket = new Socket(address.host(), address.port())) {
      socket.setSoTimeout(5_000);
      OutputStream out = socket.getOutputStream();
      out.write(requests.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      List<String> lines = new ArrayList<>();
      for (String line = in.readLine(); line != null && !line.equals(last); line = in.readLine()) {
        lines.add(line);
      }
      return lines;
    }
  }

  @Override
  public void close() {
    client.close();
    servers.forEach(IqServer::close);
  }
}
