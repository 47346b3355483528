package io.dendrite.tardis;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real store behind two switches a test flips: {@link #down} refuses every operation before it is sent (as a
 * refused connection), and {@link #loseRepliesOfApplies} lets that many applies through to the store and then
 * reports them lost (as a reply that timed out after the database committed); {@link #pauseNextApply} holds one
 * apply back before it is sent.
 */
final class FaultyStore implements DataStore {
  private final DataStore store;
  final AtomicBoolean down = new AtomicBoolean();
  final AtomicInteger loseRepliesOfApplies = new AtomicInteger();

  /** Milliseconds the next apply sleeps before it goes to the store (a writer paused mid-write), then 0 again. */
  final AtomicLong pauseNextApply = new AtomicLong();

  /** How many applies were paused so far (counted as the pause begins). */
  final AtomicInteger pausedApplies = new AtomicInteger();

  /** How many documents each apply the store took carried, in order. */
  final List<Integer> appliedBatchSizes = new CopyOnWriteArrayList<>();

  FaultyStore(DataStore store) {
    this.store = store;
  }

  @Override
  public void apply(List<EntityChanges> batch) {
    long pause = pauseNextApply.getAndSet(0);
    if (pause > 0) {
      pausedApplies.incrementAndGet();
      try {
        Thread.sleep(pause);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while paused", interrupted);
      }
    }
    refuseWhenDown();
    store.apply(batch);
    appliedBatchSizes.add(batch.size());
    if (loseRepliesOfApplies.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
      throw new DataStoreUnavailableException(
          "the reply was lost after the store applied the batch",
          new SocketTimeoutException("Read timed out"),
          false);
    }
  }

  @Override
  public Optional<Entity> read(EntityKey key) {
    refuseWhenDown();
    return store.read(key);
  }

  @Override
  public List<Entity> readRange(String collection, String field, Object lower, Object upper) {
    refuseWhenDown();
    return store.readRange(collection, field, lower, upper);
  }

  @Override
  public void close() {
    store.close();
  }

  private void refuseWhenDown() {
    if (down.get()) {
      throw new DataStoreUnavailableException(
          "the store is down", new ConnectException("Connection refused"), true);
    }
  }
}
