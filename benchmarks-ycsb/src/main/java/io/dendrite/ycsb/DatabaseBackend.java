package io.dendrite.ycsb;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The database alone: every operation is one database call, no cache. */
final class DatabaseBackend implements RecordBackend {
  private final RecordStore store;

  DatabaseBackend(RecordStore store) {
    this.store = store;
  }

  @Override
  public Optional<YcsbRecord> read(String key, long number, TripCount trips) {
    trips.database(1);
    return store.read(key);
  }

  @Override
  public List<YcsbRecord> scan(long first, long last, TripCount trips) {
    trips.database(1);
    return store.scan(first, last);
  }

  @Override
  public void update(String key, long number, Map<String, String> values, TripCount trips) {
    trips.database(1);
    store.apply(store.table().update(key, values));
  }

  @Override
  public void insert(YcsbRecord record, TripCount trips) {
    trips.database(1);
    store.apply(store.table().insert(record));
  }

  @Override
  public void delete(String key, long number, TripCount trips) {
    trips.database(1);
    store.apply(store.table().delete(key));
  }

  /** Every write went to the database before it was acknowledged. */
  @Override
  public Optional<RecordStore> settledDatabase(Duration timeout) {
    return Optional.of(store);
  }

  @Override
  public void close() {
    store.close();
  }
}
