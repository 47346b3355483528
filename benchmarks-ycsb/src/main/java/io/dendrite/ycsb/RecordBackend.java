package io.dendrite.ycsb;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How one binding reads and writes YCSB records: the database alone, Dendrite, or look-aside memcached. One instance
 * serves every client thread of the JVM, so implementations are thread-safe. Each call adds the round trips it made
 * to {@code trips}; a failure is thrown, and the binding turns it into a YCSB status.
 */
interface RecordBackend extends AutoCloseable {

  /** The record with this key, if it exists. */
  Optional<YcsbRecord> read(String key, long number, TripCount trips);

  /** The records numbered {@code first..last}, ordered by number. */
  List<YcsbRecord> scan(long first, long last, TripCount trips);

  /** Sets the given fields of an existing record (no effect on a missing one). */
  void update(String key, long number, Map<String, String> values, TripCount trips);

  /** Creates (or replaces) a record. */
  void insert(YcsbRecord record, TripCount trips);

  void delete(String key, long number, TripCount trips);

  /**
   * The database behind any cache, once it holds every write this backend acknowledged (buffered writes applied,
   * waiting at most {@code timeout} for that), for the check after a run that no acknowledged write was lost. Empty
   * when this backend cannot tell when that is, or it did not happen in time.
   */
  default Optional<RecordStore> settledDatabase(Duration timeout) {
    return Optional.empty();
  }

  /** Entries for the stats file that only this backend knows, taken just before it closes. */
  default Map<String, String> finalStats() {
    return Map.of();
  }

  @Override
  void close();
}
