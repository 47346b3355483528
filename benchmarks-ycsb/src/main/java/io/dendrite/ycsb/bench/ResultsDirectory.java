package io.dendrite.ycsb.bench;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;

/** Picks and creates {@code <root>/<yyyy-MM-dd>}, or {@code <root>/<yyyy-MM-dd>-<n>} when that is taken. */
public final class ResultsDirectory {

  private ResultsDirectory() {}

  public static Path create(Path root, LocalDate date) throws IOException {
    Files.createDirectories(root);
    for (int n = 1; ; n++) {
      Path dir = root.resolve(n == 1 ? date.toString() : date + "-" + n);
      try {
        return Files.createDirectory(dir);
      } catch (FileAlreadyExistsException e) {
        // taken by an earlier run today: try the next number
      }
    }
  }
}
