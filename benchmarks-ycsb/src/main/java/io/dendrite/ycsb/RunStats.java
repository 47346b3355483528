package io.dendrite.ycsb;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.EnumMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.LongAdder;

/**
 * Per operation type, over a whole run in one JVM: operations, the ones that failed, and the cache and database
 * round trips they made. Thread-safe. {@link #write} writes them as the stats file the runner reads:
 * {@code ops.<OP>}, {@code errors.<OP>}, {@code cacheTrips.<OP>} (requests), {@code cacheAwaited.<OP>} (round trips
 * awaited, see {@link io.dendrite.iq.client.ThreadCounters#roundTrips()}), {@code dbTrips.<OP>} for every
 * {@link Operation},
 * plus the entries the caller adds.
 */
final class RunStats {
  private final Map<Operation, LongAdder[]> counters = new EnumMap<>(Operation.class);

  RunStats() {
    for (Operation operation : Operation.values()) {
      counters.put(
          operation,
          new LongAdder[] {
            new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder()
          });
    }
  }

  void completed(Operation operation, boolean ok, TripCount trips) {
    LongAdder[] counts = counters.get(operation);
    counts[0].increment();
    if (!ok) {
      counts[1].increment();
    }
    counts[2].add(trips.cache());
    counts[3].add(trips.database());
    counts[4].add(trips.cacheAwaited());
  }

  long operations(Operation operation) {
    return counters.get(operation)[0].sum();
  }

  /** The counters as stats-file entries, with {@code extra} entries added. */
  Properties toProperties(Map<String, String> extra) {
    Properties properties = new Properties();
    counters.forEach(
        (operation, counts) -> {
          properties.setProperty("ops." + operation, Long.toString(counts[0].sum()));
          properties.setProperty("errors." + operation, Long.toString(counts[1].sum()));
          properties.setProperty("cacheTrips." + operation, Long.toString(counts[2].sum()));
          properties.setProperty("dbTrips." + operation, Long.toString(counts[3].sum()));
          properties.setProperty("cacheAwaited." + operation, Long.toString(counts[4].sum()));
        });
    extra.forEach(properties::setProperty);
    return properties;
  }

  /** Writes {@link #toProperties} to {@code file}, whole or not at all (a temporary file moved into place). */
  void write(Path file, Map<String, String> extra) throws IOException {
    Path absolute = file.toAbsolutePath();
    Files.createDirectories(absolute.getParent());
    Path temporary =
        Files.createTempFile(absolute.getParent(), absolute.getFileName().toString(), ".tmp");
    try (OutputStream out = Files.newOutputStream(temporary)) {
      toProperties(extra).store(out, "Dendrite YCSB binding stats");
    }
    Files.move(
        temporary, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
