package io.dendrite.iq.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Command-line entry point: {@code java -jar iq-server.jar [options]}. Runs until SIGTERM/SIGINT,
 * then shuts down gracefully through a shutdown hook. Arguments are parsed by hand: there are few,
 * and a parser library would be the largest thing in the jar.
 */
public final class IqServerMain {

  private static final Logger LOG = LoggerFactory.getLogger(IqServerMain.class);

  private static final String USAGE =
      """
            Usage: java -jar iq-server.jar [options]
              --listen <addr>          address to bind (default 127.0.0.1)
              --port <n>               TCP port (default 11211; 0 = ephemeral)
              --threads <n>            worker threads (default: number of CPUs, at least 2)
              --max-conns <n>          maximum simultaneous connections (default 1024)
              --idle-timeout <s>       close a connection that sends nothing for s seconds (default 0: never)
              --tls-keystore <path>    serve through TLS with the certificate and key of this PKCS#12 keystore
              --tls-password-file <p>  the file holding the keystore's password (first line; required with it)
              --auth-file <path>       require a login (memcached's: a first set whose data is "<user> <password>")
                                       from the users of this file, one user:password per line (default: none)
              --login-timeout <s>      with --auth-file: close a connection not logged in after s seconds (default 10)
              --max-pending-logins <n> with --auth-file: most connections waiting to log in; past it, or when every
                                       slot is taken, the longest waiting is closed (default: --max-conns / 4)
              --pin-users <u,...>      only these users of the auth file may pin items, or write, lease,
                                       touch, unpin or delete pinned ones: write-back's buffered writes
                                       (default: every user), or any key under a reserved prefix
              --reserved-prefixes <p,...>  with --pin-users, key prefixes only the pin users may write, lease,
                                       touch or delete under, and another user's flush_all leaves; "none"
                                       reserves none (default: write-back's, BW:,TW:,PendingWrites:,Lock:,
                                       Doc:,Session:,SessionMap:,SessionQueue:,Undecodable:,bl:,
                                       WriteBackEngines,Owner:,Fence:,dd:,dl:,ls:)
              --fence-users <u,...>    only these users of the auth file may raise fences (default: the pin
                                       users; every user without them)
              --max-held-per-conn <size>  most leases, staged values and tid/session records one
                                       connection may make the server hold (default 64m)
              --max-held-per-user <size>  the same for all of one user's connections (default 256m)
              --max-held-total <size>  the same for every user together, tid/sid names, released tids and
                                       a delayed flush_all included (default: --memory)
              --max-item-size <size>   largest value (default 1m)
              --memory <size>          memory for unpinned items (default 64m)
              --pinned-memory <size>   memory for pinned items (default 64m)
              --lease-ms <n>           lease, transaction and session lifetime in ms (default 10000)
              --transport <t>          epoll (default; NIO where it does not load) or nio
              --pready-gate <on|off>   on (default): every lease reply says <p> = 1 (a buffered write may
                                       exist) until a client sends pready, since a restart lost the pending
                                       markers; off: report only the markers held, as IQ-Twemcached does
              --lapse-drops-value <on|off>  on (default): a Q-ref/Q-inc lease that lapses without its
                                       holder's commit takes the key's unpinned value with it (the holder
                                       may have written the database and died); off: keep it, as
                                       IQ-Twemcached does
              --handover-ms <n>        on SIGTERM with pinned items: keep serving, announced as leaving, until
                                       every client that stored them confirms (pmoved) it copied them to
                                       other servers, at most this long (default 10000; 0 stops at once)
              --help                   print this help
            Sizes take an optional k, m or g suffix (powers of 1024).
            """;

  private IqServerMain() {}

  /** Parses the options, starts the server and blocks until the process is told to stop. */
  public static void main(String[] argv) throws InterruptedException {
    IqServerConfig config;
    try {
      config = parse(argv);
    } catch (IllegalArgumentException e) {
      System.err.println("iq-server: " + e.getMessage());
      System.err.print(USAGE);
      System.exit(2);
      return;
    }
    if (config == null) {
      System.out.print(USAGE);
      return;
    }
    Duration handover = handover(argv);
    IqServer server = IqServer.start(config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  LOG.info("shutting down");
                  try {
                    server.leave(handover);
                  } catch (InterruptedException interrupted) {
                    Thread.currentThread()
                        .interrupt(); // stop now, without the rest of the handover
                  }
                  server.close();
                  stopped.countDown();
                },
                "iq-server-shutdown"));
    stopped.await();
  }

  /** The {@code --handover-ms} deadline of an argument list {@link #parse} accepted (default 10 s). */
  static Duration handover(String[] argv) {
    long millis = 10_000;
    for (int i = 0; i + 1 < argv.length; i++) {
      if (argv[i].equals("--handover-ms")) {
        millis = handoverMillis(argv[i + 1]);
      }
    }
    return Duration.ofMillis(millis);
  }

  private static boolean transport(String value) {
    return switch (value) {
      case "epoll" -> true;
      case "nio" -> false;
      default ->
          throw new IllegalArgumentException("--transport must be epoll or nio, got " + value);
    };
  }

  private static boolean onOff(String option, String value) {
    return switch (value) {
      case "on" -> true;
      case "off" -> false;
      default -> throw new IllegalArgumentException(option + " must be on or off, got " + value);
    };
  }

  private static long handoverMillis(String value) {
    long millis = integer("--handover-ms", value);
    if (millis < 0) {
      throw new IllegalArgumentException("--handover-ms must not be negative, got " + value);
    }
    return millis;
  }

  /** Returns the configuration, or {@code null} when {@code --help} was asked for. */
  static IqServerConfig parse(String[] argv) {
    IqServerConfig.Builder builder = IqServerConfig.builder();
    String tlsKeystore = null;
    String tlsPasswordFile = null;
    for (int i = 0; i < argv.length; i++) {
      String option = argv[i];
      if (option.equals("--help") || option.equals("-h")) {
        return null;
      }
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("missing value for " + option);
      }
      String value = argv[++i];
      switch (option) {
        case "--handover-ms" -> handoverMillis(value);
        case "--transport" -> builder.epoll(transport(value));
        case "--pready-gate" -> builder.preadyGate(onOff(option, value));
        case "--lapse-drops-value" -> builder.lapseDropsValue(onOff(option, value));
        case "--listen" -> builder.listenAddress(value);
        case "--port" -> builder.port(integer(option, value));
        case "--threads" -> builder.threads(integer(option, value));
        case "--max-conns" -> builder.maxConnections(integer(option, value));
        case "--idle-timeout" -> builder.idleTimeout(Duration.ofSeconds(integer(option, value)));
        case "--auth-file" -> builder.credentials(Credentials.read(Path.of(value)));
        case "--tls-keystore" -> tlsKeystore = value;
        case "--tls-password-file" -> tlsPasswordFile = value;
        case "--pin-users" -> builder.pinUsers(Set.of(value.split(",")));
        case "--fence-users" -> builder.fenceUsers(Set.of(value.split(",")));
        case "--reserved-prefixes" ->
            builder.reservedPrefixes(value.equals("none") ? List.of() : List.of(value.split(",")));
        case "--max-held-per-conn" -> builder.maxHeldPerConnection(size(option, value));
        case "--max-held-per-user" -> builder.maxHeldPerUser(size(option, value));
        case "--max-held-total" -> builder.maxHeldTotal(size(option, value));
        case "--login-timeout" -> builder.loginTimeout(Duration.ofSeconds(integer(option, value)));
        case "--max-pending-logins" -> builder.maxPendingLogins(integer(option, value));
        case "--max-item-size" -> builder.maxItemSize(Math.toIntExact(size(option, value)));
        case "--memory" -> builder.memoryBytes(size(option, value));
        case "--pinned-memory" -> builder.pinnedMemoryBytes(size(option, value));
        case "--lease-ms" -> builder.leaseLifetime(Duration.ofMillis(integer(option, value)));
        default -> throw new IllegalArgumentException("unknown option " + option);
      }
    }
    if ((tlsKeystore == null) != (tlsPasswordFile == null)) {
      throw new IllegalArgumentException("--tls-keystore and --tls-password-file go together");
    }
    if (tlsKeystore != null) {
      builder.tls(ServerTls.fromKeystore(Path.of(tlsKeystore), Path.of(tlsPasswordFile)));
    }
    return builder.build();
  }

  private static int integer(String option, String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " needs a number, got " + value);
    }
  }

  private static long size(String option, String value) {
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
      throw new IllegalArgumentException(option + " needs a size like 64m, got " + value);
    }
  }
}
