package io.dendrite.writeback.internal;

import io.dendrite.writeback.change.EntityKey;

/**
 * Pinned memory refused to buffer a write, and the buffered writes are set to refuse rather than write through
 * ({@link BufferedWrites.WhenFull#REFUSE}): nothing of the write was buffered, and the document's earlier buffered
 * changes are as they were.
 */
public final class BufferRefusedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Which limit refused. */
  public enum Limit {
    /** The engine's own budget of pinned bytes, every replica counted. */
    PINNED_BUDGET,
    /** A cache server's pinned-memory quota ({@code SERVER_ERROR out of pinned memory}). */
    SERVER_PINNED_MEMORY
  }

  private final transient EntityKey key;
  private final Limit limit;

  public BufferRefusedException(EntityKey key, Limit limit) {
    super(
        "pinned memory refused to buffer the write of "
            + key
            + " ("
            + (limit == Limit.PINNED_BUDGET
                ? "the pinned budget is spent"
                : "a cache server is out of pinned memory")
            + "): nothing of it was buffered");
    this.key = key;
    this.limit = limit;
  }

  /** The document whose write was refused. */
  public EntityKey key() {
    return key;
  }

  /** Which limit refused it. */
  public Limit limit() {
    return limit;
  }
}
