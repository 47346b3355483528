package io.dendrite.writeback;

import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.util.List;
import java.util.Optional;

/** A real store seen through a test's fault or probe: everything is passed on, subclasses wrap what they need. */
public abstract class ForwardingStore implements DataStore {
  private final DataStore store;

  protected ForwardingStore(DataStore store) {
    this.store = store;
  }

  @Override
  public void apply(List<EntityChanges> batch) {
    store.apply(batch);
  }

  @Override
  public Optional<Entity> read(EntityKey key) {
    return store.read(key);
  }

  @Override
  public List<Entity> readRange(
      String collection, String field, Object lowerBound, Object upperBound) {
    return store.readRange(collection, field, lowerBound, upperBound);
  }

  @Override
  public void close() {
    store.close();
  }
}
