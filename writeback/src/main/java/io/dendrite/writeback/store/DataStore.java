package io.dendrite.writeback.store;

import io.dendrite.core.DataStoreException;
import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.FenceToken;
import io.dendrite.core.StoreFencedOutException;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.util.List;
import java.util.Optional;

/**
 * A database that buffered writes are applied to: MySQL ({@code MySqlStore}, artifact {@code dendrite-store-mysql})
 * or MongoDB ({@code MongoStore}, artifact {@code dendrite-store-mongodb}).
 * Implementations are thread-safe. Operations throw {@link DataStoreUnavailableException} when the database
 * cannot be reached (retry later) and {@link DataStoreException} when it refuses the operation; bad arguments
 * get an {@link IllegalArgumentException} before anything is sent.
 */
public interface DataStore extends AutoCloseable {

  /**
   * Applies the changes of many documents or rows in one round of batched writes. Each entity's changes are
   * applied in order; different entities are independent. Atomicity is the store's: one transaction for the whole
   * batch in SQL, one document update per {@link io.dendrite.writeback.change.ChangeSequence#steps() step} in
   * MongoDB, which is why non-idempotent sequences are converted before they are applied there.
   */
  void apply(List<EntityChanges> batch);

  /**
   * {@link #apply(List)} as the range owner holding {@code owner}: the batch applies only while no later owner
   * raised the range's fence in the data store ({@link io.dendrite.core.StoreFence}); otherwise it throws {@link
   * StoreFencedOutException} and applies nothing that was not applied before the fence rose. {@code MySqlStore} and
   * {@code MongoStore} fence; the default applies the batch unfenced, so a store that wraps another must pass
   * this call on as it is to stay fenced.
   */
  default void apply(List<EntityChanges> batch, FenceToken owner) {
    apply(batch);
  }

  /** The document or row with this key, if it exists. */
  Optional<Entity> read(EntityKey key);

  /**
   * The documents or rows of {@code collection} whose {@code field} lies in {@code [lowerBound, upperBound]},
   * ordered by that field, then by key.
   *
   * @throws IllegalArgumentException when a bound is null, the bounds are of different types, or lower &gt; upper
   */
  List<Entity> readRange(String collection, String field, Object lowerBound, Object upperBound);

  /** Releases the store's connections. */
  @Override
  void close();
}
