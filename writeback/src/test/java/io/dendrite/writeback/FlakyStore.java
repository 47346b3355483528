package io.dendrite.writeback;

import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.DataStoreUnavailableException;
import io.dendrite.writeback.store.Entity;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real store whose next {@code apply} calls report the store unavailable <em>after</em> the batch was applied:
 * the worst case for a retry, which must not apply anything twice.
 */
final class FlakyStore implements DataStore {
  private final DataStore store;
  private final AtomicInteger failuresLeft = new AtomicInteger();

  FlakyStore(DataStore store) {
    this.store = store;
  }

  void failNextApplies(int count) {
    failuresLeft.set(count);
  }

  @Override
  public void apply(List<EntityChanges> batch) {
    store.apply(batch);
    if (failuresLeft.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
      throw new DataStoreUnavailableException("connection lost before the reply", null);
    }
  }

  @Override
  public Optional<Entity> read(EntityKey key) {
    return store.read(key);
  }

  @Override
  public List<Entity> readRange(String collection, String field, Object lowerBound, Object upperBound) {
    return store.readRange(collection, field, lowerBound, upperBound);
  }

  @Override
  public void close() {
    store.close();
  }
}
