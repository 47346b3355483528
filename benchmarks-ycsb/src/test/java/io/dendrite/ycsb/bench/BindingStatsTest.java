package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BindingStatsTest {

  @TempDir Path dir;

  @Test
  void readsCountsAndDividesRoundTripsByOperations() throws IOException {
    Path file =
        write(
            """
                binding=dendrite
                ops.SCAN=200
                cacheTrips.SCAN=300
                dbTrips.SCAN=20
                ops.UPDATE=50
                cacheTrips.UPDATE=200
                dbTrips.UPDATE=0
                anomalies=0
                rowReadsChecked=1000
                writeback.pendingAtEnd=7
                writeback.drained=43
                """);

    BindingStats s = BindingStats.read(file);

    assertThat(s.binding()).isEqualTo("dendrite");
    assertThat(s.cacheTripsPerOperation("SCAN")).isEqualTo(1.5);
    assertThat(s.dbTripsPerOperation("SCAN")).isEqualTo(0.1);
    assertThat(s.cacheTripsPerOperation("UPDATE")).isEqualTo(4.0);
    assertThat(s.dbTripsPerOperation("UPDATE")).isZero();
    assertThat(s.cacheTripsPerOperation("READ")).isNaN();
    assertThat(s.anomalies()).isZero();
    assertThat(s.rowReadsChecked()).isEqualTo(1000);
    assertThat(s.writebackPendingAtEnd()).hasValue(7);
    assertThat(s.writebackDrained()).hasValue(43);
  }

  @Test
  void writeBackFiguresAreOptional() throws IOException {
    BindingStats s =
        BindingStats.read(
            write("binding=mysql\nops.READ=5\ndbTrips.READ=5\nanomalies=2\nrowReadsChecked=5\n"));

    assertThat(s.anomalies()).isEqualTo(2);
    assertThat(s.dbTripsPerOperation("READ")).isEqualTo(1.0);
    assertThat(s.writebackPendingAtEnd()).isEmpty();
  }

  @Test
  void aMissingRequiredCountIsNamed() throws IOException {
    Path file = write("binding=mysql\nrowReadsChecked=5\n");
    assertThatThrownBy(() -> BindingStats.read(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'anomalies'");
  }

  @Test
  void aCountThatIsNotAWholeNumberIsNamed() throws IOException {
    Path file = write("binding=mysql\nanomalies=0\nrowReadsChecked=5\ncacheTrips.SCAN=1.5\n");
    assertThatThrownBy(() -> BindingStats.read(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'cacheTrips.SCAN'")
        .hasMessageContaining("1.5");
  }

  private Path write(String content) throws IOException {
    return Files.writeString(dir.resolve("stats.properties"), content);
  }
}
