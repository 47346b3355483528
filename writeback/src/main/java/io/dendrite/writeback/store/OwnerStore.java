package io.dendrite.writeback.store;

import io.dendrite.core.FenceToken;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.util.List;
import java.util.Optional;

/**
 * A data store as a range's owner uses it: every batch goes out carrying the ownership's fence token ({@link
 * DataStore#apply(List, FenceToken)}), so the data store refuses it once a later owner raised the range's fence.
 * Closing it leaves the store open (it is the caller's).
 */
public final class OwnerStore implements DataStore {
  private final DataStore store;
  private final FenceToken owner;

  /** {@code store} used by the owner holding {@code owner}. */
  public OwnerStore(DataStore store, FenceToken owner) {
    this.store = store;
    this.owner = owner;
  }

  @Override
  public void apply(List<EntityChanges> batch) {
    store.apply(batch, owner);
  }

  @Override
  public void apply(List<EntityChanges> batch, FenceToken other) {
    store.apply(batch, other);
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
  public void close() {}
}
