package io.dendrite.testsupport.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A {@code main} class run in a JVM of its own, on this JVM's Java and class path, so a test can kill it with
 * SIGKILL ({@link #kill()}): a crash that runs no shutdown hook and closes no connection politely. Its standard
 * output and error are merged and collected line by line for {@link #awaitLine}. Close it in a {@code finally}
 * or {@code @AfterEach}: {@link #close()} kills it if it is still running.
 */
public final class ChildJvm implements AutoCloseable {
  private static final int TAIL_LINES = 40;

  private final String name;
  private final Process process;
  private final List<String> lines = new ArrayList<>();
  private volatile boolean outputEnded;

  private ChildJvm(String name, Process process) {
    this.name = name;
    this.process = process;
    Thread reader = new Thread(this::collectOutput, "child-output-" + name);
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts {@code mainClass} with {@code args}.
   *
   * @param jvmOptions options for the child JVM, e.g. {@code -Dkey=value} or {@code -Xmx64m}
   */
  public static ChildJvm start(String mainClass, List<String> jvmOptions, List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    command.addAll(args);
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      return new ChildJvm(mainClass.substring(mainClass.lastIndexOf('.') + 1), process);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start a JVM for " + mainClass, e);
    }
  }

  /**
   * Waits for the first line of output, from the start, that {@code matches}.
   *
   * @throws IllegalStateException when the child ends or {@code timeout} passes first; the message holds the
   *     output's last lines
   */
  public String awaitLine(Predicate<String> matches, Duration timeout) {
    return awaitLines(matches, 1, timeout).get(0);
  }

  /** Waits until {@code count} lines of output match; returns them. See {@link #awaitLine}. */
  public List<String> awaitLines(Predicate<String> matches, int count, Duration timeout) {
    return await(
        all -> {
          List<String> found = all.stream().filter(matches).limit(count).toList();
          return found.size() == count ? found : null;
        },
        count + " matching lines",
        timeout);
  }

  /**
   * Waits for the first line printed after the first {@code fromLine} lines that {@code matches}, however much was
   * printed since; returns its index in {@link #lines()}. See {@link #awaitLine}.
   */
  public int awaitLineAfter(int fromLine, Predicate<String> matches, Duration timeout) {
    return await(
        all -> {
          for (int i = fromLine; i < all.size(); i++) {
            if (matches.test(all.get(i))) {
              return i;
            }
          }
          return null;
        },
        "a matching line after line " + fromLine,
        timeout);
  }

  /** Waits until {@code found} answers something other than null for the output so far; returns that. */
  private <T> T await(Function<List<String>, T> found, String what, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lines) {
      while (true) {
        T answer = found.apply(lines);
        if (answer != null) {
          return answer;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || (!process.isAlive() && outputEnded)) {
          throw new IllegalStateException(
              name
                  + (process.isAlive()
                      ? " did not print the expected line in " + timeout
                      : " ended (exit " + process.exitValue() + ")")
                  + " before "
                  + what
                  + "; its output ended with:\n"
                  + tail());
        }
        try {
          lines.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for " + name, interrupted);
        }
      }
    }
  }

  /** Whether the child is still running. */
  public boolean isAlive() {
    return process.isAlive();
  }

  /** The child's process id. */
  public long pid() {
    return process.pid();
  }

  /** Every line printed so far. */
  public List<String> lines() {
    synchronized (lines) {
      return List.copyOf(lines);
    }
  }

  /**
   * Kills the child with SIGKILL and waits until it is gone and its output is read to the end, so that
   * {@link #lines()} then holds everything it printed.
   */
  public void kill() {
    process.destroyForcibly();
    waitUntilEnded();
  }

  /**
   * Stops the child with SIGSTOP, as a machine that stalls (a long GC pause, an overloaded host): its sockets stay
   * open and the kernel keeps accepting bytes for it, but nothing answers until {@link #resume()}.
   */
  public void pause() {
    signal("STOP");
  }

  /** Lets a {@link #pause() paused} child run again (SIGCONT); it then handles what queued up meanwhile. */
  public void resume() {
    signal("CONT");
  }

  /**
   * Asks the child to stop with SIGTERM, as a service manager does, and waits until it is gone (its shutdown hooks
   * ran) and its output is read to the end.
   *
   * @throws IllegalStateException when it is still running after {@code timeout} (it is then left running)
   */
  public void terminate(Duration timeout) {
    signal("TERM");
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException(
            "the child " + process.pid() + " still runs " + timeout + " after SIGTERM");
      }
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "interrupted while waiting for the child to stop", interrupted);
    }
    waitUntilEnded();
  }

  private void signal(String name) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
      if (kill.waitFor() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException failed) {
      throw new UncheckedIOException(failed);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling the child", interrupted);
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {

      kill();
    }
  }

  private void waitUntilEnded() {
    try {
      process.waitFor();
      synchronized (lines) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!outputEnded && System.nanoTime() < deadline) {
          lines.wait(100);
        }
      }
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void collectOutput() {
    try (BufferedReader reader =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = reader.readLine()) != null; ) {
        synchronized (lines) {
          lines.add(line);
          lines.notifyAll();
        }
      }
    } catch (IOException ended) {
      // the process is gone
    } finally {
      synchronized (lines) {
        outputEnded = true;
        lines.notifyAll();
      }
    }
  }

  /** The last lines the child printed, for the message of a failure that concerns it. */
  public String tail() {
    synchronized (lines) {
      return String.join("\n", lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()));
    }
  }
}
