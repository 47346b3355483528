package io.dendrite.core;

/**
 * A range's fence in the data store itself, so that a statement of a former owner that reaches the data store after
 * a new owner took the range over is refused instead of applied (the cache servers' fence cannot refuse it).
 *
 * <p>A new owner {@link #raise raises} the range's fence to its epoch before it serves the range; every statement of
 * an owner carries its {@link FenceToken} and applies only while the fence is not above its epoch, checked
 * atomically with the statement. Raising waits for statements that passed the check and have not ended yet, so
 * once {@link #raise} returned, every earlier owner's statement has either ended before or will be refused: what the
 * new owner reads from then on stays current.
 *
 * <p>{@link SqlFence} (MySQL, MariaDB) and the data stores {@code MySqlStore} ({@code dendrite-store-mysql}) and
 * {@code MongoStore} ({@code dendrite-store-mongodb}) are fences.
 */
public interface StoreFence {

  /**
   * Raises {@code range}'s fence to its {@link Range#epoch()} (a fence never goes down).
   *
   * @throws DataStoreException when the data store could not raise it: the range must not be served yet
   */
  void raise(Range range);

  /**
   * A range being taken over, as a fence needs it: its fence name and the new owner's epoch, and where its rows or
   * documents are (a store that fences per document, as MongoDB without transactions, raises each of them).
   *
   * @param fence the fence's name ({@code Fence:<range>})
   * @param collection the table or collection
   * @param attribute the range attribute (column or field)
   * @param lowerBound the range's smallest attribute value
   * @param upperBound the range's largest attribute value
   * @param epoch the new owner's epoch
   */
  record Range(
      String fence,
      String collection,
      String attribute,
      Object lowerBound,
      Object upperBound,
      long epoch) {

    /** The token the range's owner at this epoch gives its statements. */
    public FenceToken token() {
      return new FenceToken(fence, epoch);
    }
  }
}
