package io.dendrite.iq.server;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Consumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * The command line of {@link IqServerMain}: what each option means and what it becomes in an {@link
 * IqServerConfig}. An option not given is left to the builder, whose defaults are the ones the help states; a value
 * the builder refuses is reported as a bad value of the option that carried it.
 */
@Command(
    name = "iq-server",
    customSynopsis = "java -jar iq-server.jar [options]",
    separator = " ",
    sortOptions = false,
    usageHelpWidth = 118,
    footer = "Sizes take an optional k, m or g suffix (powers of 1024).")
final class ServerOptions {

  @Spec private CommandSpec spec;

  @Option(
      names = "--listen",
      paramLabel = "<addr>",
      description = "address to bind (default 127.0.0.1)")
  private String listen;

  @Option(
      names = "--port",
      paramLabel = "<n>",
      description = "TCP port (default 11211; 0 = ephemeral)")
  private Integer port;

  @Option(
      names = "--port-file",
      paramLabel = "<path>",
      description =
          "once listening, write the port to this file (the number and a newline; whole or not at all), so"
              + " that a tool starting the server on --port 0 can read which port it got")
  private Path portFile;

  @Option(
      names = "--threads",
      paramLabel = "<n>",
      description = "worker threads (default: number of CPUs, at least 2)")
  private Integer threads;

  @Option(
      names = "--max-conns",
      paramLabel = "<n>",
      description = "maximum simultaneous connections (default 1024)")
  private Integer maxConnections;

  @Option(
      names = "--idle-timeout",
      paramLabel = "<s>",
      description = "close a connection that sends nothing for s seconds (default 0: never)")
  private Integer idleTimeoutSeconds;

  @Option(
      names = "--tls-keystore",
      paramLabel = "<path>",
      description = "serve through TLS with the certificate and key of this PKCS#12 keystore")
  private Path tlsKeystore;

  @Option(
      names = "--tls-password-file",
      paramLabel = "<p>",
      description = "the file holding the keystore's password (first line; required with it)")
  private Path tlsPasswordFile;

  @Option(
      names = "--auth-file",
      paramLabel = "<path>",
      description =
          "require a login (memcached's: a first set whose data is \"<user> <password>\") from the users of"
              + " this file, one user:password per line (default: none)")
  private Path authFile;

  @Option(
      names = "--login-timeout",
      paramLabel = "<s>",
      description =
          "with --auth-file: close a connection not logged in after s seconds (default 10)")
  private Integer loginTimeoutSeconds;

  @Option(
      names = "--max-pending-logins",
      paramLabel = "<n>",
      description =
          "with --auth-file: most connections waiting to log in; past it, or when every slot is taken, the"
              + " longest waiting is closed (default: --max-conns / 4)")
  private Integer maxPendingLogins;

  @Option(
      names = "--pin-users",
      paramLabel = "<u,...>",
      description =
          "only these users of the auth file may pin items, or write, lease, touch, unpin or delete pinned"
              + " ones: write-back's buffered writes (default: every user), or any key under a reserved"
              + " prefix")
  private String pinUsers;

  @Option(
      names = "--reserved-prefixes",
      paramLabel = "<p,...>",
      description =
          "with --pin-users, key prefixes only the pin users may write, lease, touch or delete under, and"
              + " another user's flush_all leaves; \"none\" reserves none (default: write-back's, BW:,TW:,"
              + "PendingWrites:,Lock:,Doc:,Session:,SessionMap:,SessionQueue:,Undecodable:,bl:,"
              + "WriteBackEngines,Owner:,Fence:,dd:,dl:,ls:)")
  private String reservedPrefixes;

  @Option(
      names = "--fence-users",
      paramLabel = "<u,...>",
      description =
          "only these users of the auth file may raise fences (default: the pin users; every user without"
              + " them)")
  private String fenceUsers;

  @Option(
      names = "--max-held-per-conn",
      paramLabel = "<size>",
      converter = SizeConverter.class,
      description =
          "most leases, staged values and tid/session records one connection may make the server hold"
              + " (default 64m)")
  private Long maxHeldPerConnection;

  @Option(
      names = "--max-held-per-user",
      paramLabel = "<size>",
      converter = SizeConverter.class,
      description = "the same for all of one user's connections (default 256m)")
  private Long maxHeldPerUser;

  @Option(
      names = "--max-held-total",
      paramLabel = "<size>",
      converter = SizeConverter.class,
      description =
          "the same for every user together, tid/sid names, released tids and a delayed flush_all"
              + " included (default: --memory)")
  private Long maxHeldTotal;

  @Option(
      names = "--max-item-size",
      paramLabel = "<size>",
      converter = SizeConverter.class,
      description = "largest value (default 1m)")
  private Long maxItemSize;

  @Option(
      names = "--memory",
      paramLabel = "<size>",
      converter = SizeConverter.class,
      description = "memory for unpinned items (default 64m)")
  private Long memory;

  @Option(
      names = "--pinned-memory",
      paramLabel = "<size>",
      converter = SizeConverter.class,
      description = "memory for pinned items (default 64m)")
  private Long pinnedMemory;

  @Option(
      names = "--lease-ms",
      paramLabel = "<n>",
      description = "lease, transaction and session lifetime in ms (default 10000)")
  private Integer leaseMillis;

  @Option(
      names = "--transport",
      paramLabel = "<t>",
      description = "epoll (default; NIO where it does not load) or nio")
  private String transport;

  @Option(
      names = "--pready-gate",
      paramLabel = "<on|off>",
      description =
          "on (default): every lease reply says <p> = 1 (a buffered write may exist) until a client sends"
              + " pready, since a restart lost the pending markers; off: report only the markers held, as"
              + " IQ-Twemcached does")
  private String preadyGate;

  @Option(
      names = "--lapse-drops-value",
      paramLabel = "<on|off>",
      description =
          "on (default): a Q-ref/Q-inc lease that lapses without its holder's commit takes the key's"
              + " unpinned value with it (the holder may have written the database and died); off: keep it,"
              + " as IQ-Twemcached does")
  private String lapseDropsValue;

  @Option(
      names = "--handover-ms",
      paramLabel = "<n>",
      description =
          "on SIGTERM with pinned items: keep serving, announced as leaving, until every client that stored"
              + " them confirms (pmoved) it copied them to other servers, at most this long (default 10000; 0"
              + " stops at once)")
  private long handoverMillis = 10_000;

  @Option(
      names = {"--help", "-h"},
      usageHelp = true,
      description = "print this help")
  private boolean help;

  /**
   * A parser for these options. Like the hand-written one before it, it lets a repeated option's last value win, and
   * its help keeps each option and its value on the line of their meaning.
   */
  static CommandLine commandLine(ServerOptions options) {
    return new CommandLine(options)
        .setOverwrittenOptionsAllowed(true)
        .setUsageHelpLongOptionsMaxWidth(28);
  }

  /**
   * Parses {@code argv} and checks what the parser alone cannot.
   *
   * @return the options, or {@code null} when they ask for the help
   * @throws ParameterException naming the option that is unknown, lacks its value or has a bad one
   */
  static ServerOptions parse(String... argv) {
    ServerOptions options = new ServerOptions();
    CommandLine cli = commandLine(options);
    cli.parseArgs(argv);
    if (cli.isUsageHelpRequested()) {
      return null;
    }
    options.check();
    return options;
  }

  private void check() {
    if (handoverMillis < 0) {
      throw invalid("--handover-ms", "must not be negative, got " + handoverMillis);
    }
    if ((tlsKeystore == null) != (tlsPasswordFile == null)) {
      throw new ParameterException(
          spec.commandLine(), "--tls-keystore and --tls-password-file go together");
    }
  }

  /** Where to write the port once the server listens ({@code --port-file}), or {@code null}. */
  Path portFile() {
    return portFile;
  }

  /** How long a SIGTERM waits for the handover ({@code --handover-ms}). */
  Duration handover() {
    return Duration.ofMillis(handoverMillis);
  }

  /**
   * The server's configuration: each option given goes to the builder, and a value the builder refuses (a port out
   * of range, an unreadable auth file, a pin user the auth file does not list) is reported against its option.
   *
   * @throws ParameterException naming the option whose value the server cannot take
   */
  IqServerConfig config() {
    IqServerConfig.Builder builder = IqServerConfig.builder();
    apply("--listen", listen, builder::listenAddress);
    apply("--port", port, builder::port);
    apply("--threads", threads, builder::threads);
    apply("--max-conns", maxConnections, builder::maxConnections);
    apply("--idle-timeout", idleTimeoutSeconds, s -> builder.idleTimeout(Duration.ofSeconds(s)));
    apply("--auth-file", authFile, file -> builder.credentials(Credentials.read(file)));
    apply(
        "--tls-keystore",
        tlsKeystore,
        keystore -> builder.tls(ServerTls.fromKeystore(keystore, tlsPasswordFile)));
    apply("--pin-users", pinUsers, users -> builder.pinUsers(Set.of(users.split(","))));
    apply("--fence-users", fenceUsers, users -> builder.fenceUsers(Set.of(users.split(","))));
    apply(
        "--reserved-prefixes",
        reservedPrefixes,
        prefixes ->
            builder.reservedPrefixes(
                prefixes.equals("none") ? List.of() : List.of(prefixes.split(","))));
    apply("--max-held-per-conn", maxHeldPerConnection, builder::maxHeldPerConnection);
    apply("--max-held-per-user", maxHeldPerUser, builder::maxHeldPerUser);
    apply("--max-held-total", maxHeldTotal, builder::maxHeldTotal);
    apply("--login-timeout", loginTimeoutSeconds, s -> builder.loginTimeout(Duration.ofSeconds(s)));
    apply("--max-pending-logins", maxPendingLogins, builder::maxPendingLogins);
    apply(
        "--max-item-size",
        maxItemSize,
        // A size past an int is past the builder's limit too, which it names.
        size -> builder.maxItemSize((int) Math.min(size, Integer.MAX_VALUE)));
    apply("--memory", memory, builder::memoryBytes);
    apply("--pinned-memory", pinnedMemory, builder::pinnedMemoryBytes);
    apply("--lease-ms", leaseMillis, ms -> builder.leaseLifetime(Duration.ofMillis(ms)));
    apply("--transport", transport, value -> builder.epoll(isEpoll(value)));
    apply("--pready-gate", preadyGate, value -> builder.preadyGate(isOn(value)));
    apply("--lapse-drops-value", lapseDropsValue, value -> builder.lapseDropsValue(isOn(value)));
    try {
      // Rules between options, such as pin or fence users that the auth file does not list.
      return builder.build();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

  private <T> void apply(String option, T value, Consumer<T> setter) {
    if (value == null) {
      return;
    }
    try {
      setter.accept(value);
    } catch (IllegalArgumentException | UncheckedIOException e) {
      throw invalid(option, e.getMessage());
    }
  }

  private ParameterException invalid(String option, String reason) {
    return new ParameterException(
        spec.commandLine(), "Invalid value for option '" + option + "': " + reason);
  }

  /** A size in bytes with an optional k, m or g suffix (powers of 1024): {@code 64m}. */
  static final class SizeConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      String lower = value.toLowerCase(Locale.ROOT);
      int shift =
          switch (lower.isEmpty() ? ' ' : lower.charAt(lower.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            default -> 0;
          };
      String digits = shift == 0 ? lower : lower.substring(0, lower.length() - 1);
      try {
        return Long.parseLong(digits) << shift;
      } catch (NumberFormatException e) {
        throw new TypeConversionException("needs a size like 64m, got " + value);
      }
    }
  }

  private static boolean isOn(String value) {
    return switch (value) {
      case "on" -> true;
      case "off" -> false;
      default -> throw new IllegalArgumentException("must be on or off, got " + value);
    };
  }

  private static boolean isEpoll(String value) {
    return switch (value) {
      case "epoll" -> true;
      case "nio" -> false;
      default -> throw new IllegalArgumentException("must be epoll or nio, got " + value);
    };
  }
}
