package io.dendrite.ycsb;

import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.util.List;
import java.util.Optional;

/**
 * A {@link DataStore} that counts the calls each thread makes through it, so that a binding whose database calls
 * happen inside a library ({@code Tardis}) can report them per operation as the others do: read {@link
 * #callsOfCurrentThread()} before and after the operation. Calls made on other threads (recovery workers) are not
 * any operation's.
 */
final class CountingDataStore implements DataStore {
  private final DataStore store;
  private final ThreadLocal<long[]> calls = ThreadLocal.withInitial(() -> new long[1]);

  CountingDataStore(DataStore store) {
    this.store = store;
  }

  /** The calls this thread has made so far, failed ones included. */
  long callsOfCurrentThread() {
    return calls.get()[0];
  }

  @Override
  public void apply(List<EntityChanges> batch) {
    calls.get()[0]++;
    store.apply(batch);
  }

  @Override
  public Optional<Entity> read(EntityKey key) {
    calls.get()[0]++;
    return store.read(key);
  }

  @Override
  public List<Entity> readRange(
      String collection, String field, Object lowerBound, Object upperBound) {
    calls.get()[0]++;
    return store.readRange(collection, field, lowerBound, upperBound);
  }

  @Override
  public void close() {
    store.close();
  }
}
