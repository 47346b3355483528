package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultsDirectoryTest {

  @TempDir Path root;

  @Test
  void aSecondRunOnTheSameDayGetsANumberedDirectory() throws IOException {
    LocalDate day = LocalDate.of(2026, 11, 21);

    assertThat(ResultsDirectory.create(root, day))
        .isEqualTo(root.resolve("2026-11-21"))
        .isDirectory();
    assertThat(ResultsDirectory.create(root, day))
        .isEqualTo(root.resolve("2026-11-21-2"))
        .isDirectory();
    assertThat(ResultsDirectory.create(root, day))
        .isEqualTo(root.resolve("2026-11-21-3"))
        .isDirectory();
  }
}
