package io.dendrite.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunStatsTest {

  @Test
  void writesTotalsPerOperationAndTheExtraEntries(@TempDir Path directory) throws Exception {
    RunStats stats = new RunStats();
    stats.completed(Operation.READ, true, trips(1, 0));
    stats.completed(Operation.READ, true, trips(3, 1));
    stats.completed(Operation.UPDATE, false, trips(2, 1));
    Path file = directory.resolve("nested/stats.properties");

    stats.write(file, Map.of("binding", "dendrite", "anomalies", "0"));

    Properties written = new Properties();
    try (Reader reader = Files.newBufferedReader(file)) {
      written.load(reader);
    }
    assertThat(written)
        .containsEntry("binding", "dendrite")
        .containsEntry("anomalies", "0")
        .containsEntry("ops.READ", "2")
        .containsEntry("cacheTrips.READ", "4")
        .containsEntry("dbTrips.READ", "1")
        .containsEntry("cacheAwaited.READ", "0")
        .containsEntry("errors.READ", "0")
        .containsEntry("ops.UPDATE", "1")
        .containsEntry("errors.UPDATE", "1")
        .containsEntry("cacheTrips.UPDATE", "2")
        .containsEntry("ops.SCAN", "0")
        .containsEntry("ops.INSERT", "0")
        .containsEntry("ops.DELETE", "0");
    try (var left = Files.list(file.getParent())) {
      assertThat(left).as("no temporary file left behind").containsExactly(file);
    }
  }

  private static TripCount trips(int cache, int database) {
    TripCount trips = new TripCount();
    trips.cache(cache);
    trips.database(database);
    return trips;
  }
}
