package io.dendrite.coordination;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * Who may send a process forwarded requests, and how they travel: the setting every process of a service gives its
 * {@link ForwardingServer} and {@link ForwardingClient} (through {@link ManyProcesses#forwardingSecurity}).
 *
 * <ul>
 *   <li>{@link #sharedSecret}: the processes share a secret, and every connection proves it before any request is
 *       served (an HMAC-SHA256 challenge and response both ways, {@link ForwardingHandshake}): a stranger that reaches
 *       the port runs nothing, and a process only sends requests to a peer that proved it holds the secret too.
 *   <li>{@link #unauthenticatedOnLoopback}: no secret, allowed only for a port bound to a loopback address (every
 *       process of the service on one machine: tests, demos); every local user of the machine can reach it.
 *   <li>{@link #tls}: on top of either, every connection runs through TLS, with the same {@link SSLContext}s the IQ
 *       servers and clients take ({@code ServerTls.fromKeystore}, {@code ClientTls.trusting}).
 * </ul>
 *
 * {@link #toString()} never shows the secret.
 */
public final class ForwardingSecurity {
  /** The least secret taken: 128 bits, so it cannot be guessed in the handshakes a stranger can afford. */
  static final int MIN_SECRET_BYTES = 16;

  private final byte[] secret;
  private final SSLContext serverTls;
  private final SSLContext clientTls;

  private ForwardingSecurity(byte[] secret, SSLContext serverTls, SSLContext clientTls) {
    this.secret = secret;
    this.serverTls = serverTls;
    this.clientTls = clientTls;
  }

  /**
   * Connections must prove they hold {@code secret}, the same bytes in every process of the service (at least 16:
   * e.g. 32 random bytes, or a long random password's UTF-8).
   *
   * @throws IllegalArgumentException when the secret is shorter than 16 bytes
   */
  public static ForwardingSecurity sharedSecret(byte[] secret) {
    Objects.requireNonNull(secret, "secret");
    if (secret.length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(
          "a forwarding secret must be at least "
              + MIN_SECRET_BYTES
              + " bytes, got "
              + secret.length);
    }
    return new ForwardingSecurity(secret.clone(), null, null);
  }

  /**
   * {@link #sharedSecret(byte[])} with the UTF-8 of {@code secretFile}'s first line, so that the secret never shows in
   * a process list or a configuration dump.
   *
   * @throws IllegalArgumentException when that line is shorter than 16 bytes
   * @throws UncheckedIOException when the file cannot be read
   */
  public static ForwardingSecurity sharedSecret(Path secretFile) {
    try {
      String line =
          Files.readAllLines(secretFile, StandardCharsets.UTF_8).stream().findFirst().orElse("");
      return sharedSecret(line.strip().getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the forwarding secret " + secretFile, e);
    }
  }

  /**
   * No secret: every connection is served. Only for a forwarding port bound to a loopback address (the server refuses
   * to start on another), where only processes of this machine reach it.
   */
  public static ForwardingSecurity unauthenticatedOnLoopback() {
    return new ForwardingSecurity(null, null, null);
  }

  /**
   * The same settings, with every connection through TLS: {@code server} holds this process's certificate and key
   * (e.g. {@code ServerTls.fromKeystore}), {@code client} trusts the other processes' certificates (e.g. {@code
   * ClientTls.trusting}), which must name the address each process listens on (checked as HTTPS does).
   */
  public ForwardingSecurity tls(SSLContext server, SSLContext client) {
    return new ForwardingSecurity(
        secret, Objects.requireNonNull(server, "server"), Objects.requireNonNull(client, "client"));
  }

  /** Whether connections must prove the secret. */
  public boolean authenticated() {
    return secret != null;
  }

  byte[] secret() {
    return secret;
  }

  SSLContext serverTls() {
    return serverTls;
  }

  SSLContext clientTls() {
    return clientTls;
  }

  @Override
  public String toString() {
    return "ForwardingSecurity["
        + (authenticated() ? "shared secret" : "unauthenticated, loopback only")
        + (serverTls != null ? ", TLS" : ", plain TCP")
        + "]";
  }
}
