package io.dendrite.ycsb.bench;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Runs {@code site.ycsb.Client} as a child JVM: stdout (the final measurements) goes to a file,
 * stderr (the {@code -s} status lines and the binding's logging) to another while each status line is
 * handed to a listener as it arrives.
 */
final class YcsbChild {

  private YcsbChild() {}

  /**
   * Runs the command; returns the lines YCSB printed on stdout.
   *
   * @param onStart given the child's pid once it runs, before any status line is handed on
   */
  static List<String> run(
      List<String> command,
      Path stdout,
      Path stderr,
      Duration timeout,
      LongConsumer onStart,
      Consumer<YcsbOutputParser.Status> onStatus)
      throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectOutput(stdout.toFile()).start();
    onStart.accept(process.pid());
    Thread pump = new Thread(() -> pumpStderr(process, stderr, onStatus), "ycsb-stderr");
    pump.setDaemon(true);
    pump.start();
    boolean finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (!finished) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    pump.join(10_000);
    if (!finished) {
      throw new IOException(
          "YCSB did not finish within " + timeout.toSeconds() + " s; see " + stderr);
    }
    if (process.exitValue() != 0) {
      throw new IOException("YCSB exited with " + process.exitValue() + "; see " + stderr);
    }
    return Files.readAllLines(stdout, StandardCharsets.UTF_8);
  }

  private static void pumpStderr(
      Process process, Path stderr, Consumer<YcsbOutputParser.Status> onStatus) {
    try (BufferedReader in =
            new BufferedReader(
                new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
        BufferedWriter out = Files.newBufferedWriter(stderr, StandardCharsets.UTF_8)) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        out.write(line);
        out.newLine();
        out.flush();
        YcsbOutputParser.status(line).ifPresent(onStatus);
      }
    } catch (IOException e) {
      // the child went away; its exit code tells what happened
    }
  }
}
