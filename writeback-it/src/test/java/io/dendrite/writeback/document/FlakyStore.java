package io.dendrite.writeback.document;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.writeback.ForwardingStore;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.store.DataStore;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real store whose next {@code apply} calls report the store unavailable <em>after</em> the batch was applied:
 * the worst case for a retry, which must not apply anything twice.
 */
final class FlakyStore extends ForwardingStore {
  private final AtomicInteger failuresLeft = new AtomicInteger();

  FlakyStore(DataStore store) {
    super(store);
  }

  void failNextApplies(int count) {
    failuresLeft.set(count);
  }

  @Override
  public void apply(List<EntityChanges> batch) {
    super.apply(batch);
    if (failuresLeft.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
      throw new DataStoreUnavailableException("connection lost before the reply", null);
    }
  }
}
