package io.dendrite.iq.server;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * Command-line entry point: {@code java -jar iq-server.jar [options]} ({@link ServerOptions} says which). Runs until
 * SIGTERM/SIGINT, then shuts down gracefully through a shutdown hook. {@code --help} prints the options; a bad one is
 * named on stderr, above the help, and the process exits with status 2.
 */
public final class IqServerMain {

  private static final Logger LOG = LoggerFactory.getLogger(IqServerMain.class);

  /** The exit status for arguments the server cannot run with, as before picocli and as picocli's own. */
  static final int BAD_ARGUMENTS = CommandLine.ExitCode.USAGE;

  /** The exit status when the server started but could not write its {@code --port-file}. */
  static final int CANNOT_REPORT_PORT = 1;

  private IqServerMain() {}

  /** Parses the options, starts the server and blocks until the process is told to stop. */
  public static void main(String[] argv) throws InterruptedException {
    ServerOptions options;
    IqServerConfig config;
    try {
      options = ServerOptions.parse(argv);
      if (options == null) {
        usage(System.out);
        return;
      }
      config = options.config();
    } catch (ParameterException e) {
      System.err.println("iq-server: " + e.getMessage());
      usage(System.err);
      System.exit(BAD_ARGUMENTS);
      return;
    }
    Duration handover = options.handover();
    IqServer server = IqServer.start(config);
    if (options.portFile() != null) {
      try {
        PortFile.write(options.portFile(), server.port());
      } catch (IOException e) {
        // Whoever asked for the file waits for it: a server it cannot find is of no use to it.
        System.err.println("iq-server: cannot write --port-file " + options.portFile() + ": " + e);
        server.close();
        System.exit(CANNOT_REPORT_PORT);
        return;
      }
    }
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

  /** The help: every option with what it means and its default. */
  static void usage(PrintStream out) {
    ServerOptions.commandLine(new ServerOptions()).usage(out);
  }
}
