package io.dendrite.ycsb.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.TreeMap;

/**
 * What a binding counted in one YCSB JVM, read from the properties file it writes at the end of its run
 * when given {@code dendrite.statsfile}: operations, cache and database round trips per operation
 * type, stale reads found by the consistency checker, and for write-back what was still buffered.
 */
public record BindingStats(
    String binding,
    Map<String, Long> operations,
    Map<String, Long> cacheTrips,
    Map<String, Long> cacheAwaited,
    Map<String, Long> dbTrips,
    long anomalies,
    long rowReadsChecked,
    OptionalLong writebackPendingAtEnd,
    OptionalLong writebackDrained) {

  /** The operation types of the stats-file contract. */
  public static final List<String> OPERATION_TYPES =
      List.of("READ", "SCAN", "UPDATE", "INSERT", "DELETE");

  public BindingStats {
    operations = Map.copyOf(operations);
    cacheTrips = Map.copyOf(cacheTrips);
    cacheAwaited = Map.copyOf(cacheAwaited);
    dbTrips = Map.copyOf(dbTrips);
  }

  /** Cache round trips per operation of this type; NaN when the run had none. */
  public double cacheTripsPerOperation(String type) {
    return perOperation(cacheTrips, type);
  }

  /**
   * Cache round trips awaited per operation of this type (requests sent together count once; see
   * {@code ThreadCounters.roundTrips}); NaN when the run had none or the binding did not count them.
   */
  public double cacheAwaitedPerOperation(String type) {
    return cacheAwaited.containsKey(type) ? perOperation(cacheAwaited, type) : Double.NaN;
  }

  /** Database round trips per operation of this type; NaN when the run had none. */
  public double dbTripsPerOperation(String type) {
    return perOperation(dbTrips, type);
  }

  private double perOperation(Map<String, Long> trips, String type) {
    long ops = operations.getOrDefault(type, 0L);
    return ops == 0 ? Double.NaN : (double) trips.getOrDefault(type, 0L) / ops;
  }

  /**
   * Reads a stats file.
   *
   * @throws IllegalArgumentException naming the file and key when {@code binding}, {@code anomalies} or
   *     {@code rowReadsChecked} is missing or a count is not a whole number
   */
  public static BindingStats read(Path file) {
    Properties p = PropertiesFiles.load(file, "binding stats");
    String binding = p.getProperty("binding");
    if (binding == null || binding.isBlank()) {
      throw new IllegalArgumentException("binding stats " + file + " has no 'binding'");
    }
    Map<String, Long> ops = new TreeMap<>();
    Map<String, Long> cache = new TreeMap<>();
    Map<String, Long> awaited = new TreeMap<>();
    Map<String, Long> db = new TreeMap<>();
    for (String type : OPERATION_TYPES) {
      optional(p, file, "ops." + type).ifPresent(v -> ops.put(type, v));
      optional(p, file, "cacheTrips." + type).ifPresent(v -> cache.put(type, v));
      optional(p, file, "cacheAwaited." + type).ifPresent(v -> awaited.put(type, v));
      optional(p, file, "dbTrips." + type).ifPresent(v -> db.put(type, v));
    }
    return new BindingStats(
        binding.strip(),
        ops,
        cache,
        awaited,
        db,
        required(p, file, "anomalies"),
        required(p, file, "rowReadsChecked"),
        optional(p, file, "writeback.pendingAtEnd"),
        optional(p, file, "writeback.drained"));
  }

  private static long required(Properties p, Path file, String key) {
    OptionalLong v = optional(p, file, key);
    if (v.isEmpty()) {
      throw new IllegalArgumentException("binding stats " + file + " has no '" + key + "'");
    }
    return v.getAsLong();
  }

  private static OptionalLong optional(Properties p, Path file, String key) {
    String value = p.getProperty(key);
    if (value == null) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(Long.parseLong(value.strip()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "binding stats " + file + ": '" + key + "' is not a whole number: " + value);
    }
  }
}
