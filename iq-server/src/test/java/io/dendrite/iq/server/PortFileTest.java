package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PortFileTest {

  @TempDir Path dir;

  @Test
  void holdsTheNumberAndANewlineAndNothingBesideIt() throws IOException {
    Path file = dir.resolve("port");
    PortFile.write(file, 41234);
    assertThat(Files.readString(file)).isEqualTo("41234\n");
    PortFile.write(file, 7);
    assertThat(Files.readString(file)).as("replaced whole").isEqualTo("7\n");
    try (var files = Files.list(dir)) {
      assertThat(files).as("no temporary file left").containsExactly(file);
    }
  }

  @Test
  void aFolderThatIsNotThereIsAnIoException() {
    assertThatThrownBy(() -> PortFile.write(dir.resolve("missing/port"), 1))
        .isInstanceOf(IOException.class);
  }

  @Test
  void awaitReadsThePortOnceItIsWritten() throws Exception {
    Path file = dir.resolve("port");
    CompletableFuture<Void> written =
        CompletableFuture.runAsync(
            () -> {
              try {
                Thread.sleep(200);
                PortFile.write(file, 40000);
              } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    assertThat(PortFile.await(file, Duration.ofSeconds(30), () -> true)).isEqualTo(40000);
    written.join();
  }

  @Test
  void awaitGivesUpWhenTheServerEndedOrTimeIsUp() {
    Path file = dir.resolve("port");
    assertThatThrownBy(() -> PortFile.await(file, Duration.ofSeconds(30), () -> false))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("ended without writing its port");
    assertThatThrownBy(() -> PortFile.await(file, Duration.ofMillis(100), () -> true))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("within");
  }

  @Test
  void aServerThatWroteItAndEndedIsStillRead() throws Exception {
    Path file = dir.resolve("port");
    PortFile.write(file, 5);
    assertThat(PortFile.await(file, Duration.ofSeconds(1), () -> false)).isEqualTo(5);
  }
}
