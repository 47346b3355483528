package io.dendrite.iq.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The file a server started with {@code --port-file} writes its port to once it listens: the number and a newline.
 * It appears whole or not at all (written beside it under another name, then moved into place), so a tool that
 * starts a server on {@code --port 0} reads the port it got as soon as the file is there, and never half of it.
 */
public final class PortFile {

  private static final long POLL_MILLIS = 50;

  private PortFile() {}

  /** Writes {@code port} to {@code file}, replacing what was there, in one step as its readers see it. */
  static void write(Path file, int port) throws IOException {
    Path target = file.toAbsolutePath();
    Path temporary = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".tmp");
    try {
      Files.writeString(temporary, port + "\n", StandardCharsets.US_ASCII);
      Files.move(
          temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(temporary); // gone after the move; left only when writing failed
    }
  }

  /**
   * Waits for a server started with {@code --port-file file} to write it, and returns its port. The caller makes
   * sure no older file is there when the server starts (a fresh path, or one it deleted).
   *
   * @param running whether the server may still write the file: {@code false} once its process has ended
   * @throws IOException when the file is not there by {@code timeout} or once the server is gone, or cannot be read
   */
  public static int await(Path file, Duration timeout, BooleanSupplier running)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      boolean mayStillWrite =
          running.getAsBoolean(); // asked first: one that wrote it and ended is read below
      try {
        return Integer.parseInt(Files.readString(file, StandardCharsets.US_ASCII).strip());
      } catch (NoSuchFileException notYet) {
        if (!mayStillWrite) {
          throw new IOException("the server ended without writing its port to " + file);
        }
        if (System.nanoTime() > deadline) {
          throw new IOException("the server wrote no port to " + file + " within " + timeout);
        }
        Thread.sleep(POLL_MILLIS);
      }
    }
  }
}
