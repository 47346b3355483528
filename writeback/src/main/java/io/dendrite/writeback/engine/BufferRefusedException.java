package io.dendrite.writeback.engine;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.writeback.change.EntityKey;

/**
 * The cache tier refused to buffer a write, because pinned memory ran out (the engine's budget, a cache server's
 * pinned quota, or, on stock memcached, a server's memory): nothing of the write was buffered, and what was buffered
 * before is as it was. Only an engine that buffers a write <em>because</em> the data store cannot take it throws this
 * (TARDIS, whose teleported writes are buffered writes): the write then failed because the data store is unavailable,
 * hence a {@link DataStoreUnavailableException}. The write-back engines never throw it: they write through instead.
 */
public final class BufferRefusedException extends DataStoreUnavailableException {
  private static final long serialVersionUID = 1L;

  /** Which limit refused the write. */
  public enum Limit {
    /** The engine's own budget of pinned bytes, every replica counted ({@link EngineBuilder#pinnedBudgetBytes}). */
    PINNED_BUDGET,
    /** A cache server's pinned-memory quota ({@code SERVER_ERROR out of pinned memory}). */
    SERVER_PINNED_MEMORY,
    /**
     * A cache server that evicts nothing had no memory left: stock memcached run with {@code -M} refuses a store
     * ({@code SERVER_ERROR out of memory}) instead of evicting a buffered write.
     */
    SERVER_MEMORY
  }

  private final transient EntityKey key;
  private final Limit limit;

  /**
   * {@code limit} refused to buffer the write of {@code key}, which was therefore not sent to the data store either.
   */
  public BufferRefusedException(EntityKey key, Limit limit) {
    super(
        "pinned memory refused to buffer the write of "
            + key
            + " ("
            + switch (limit) {
              case PINNED_BUDGET -> "the pinned budget is spent";
              case SERVER_PINNED_MEMORY -> "a cache server is out of pinned memory";
              case SERVER_MEMORY -> "a cache server is out of memory";
            }
            + "): nothing of it was buffered",
        null,
        true);
    this.key = key;
    this.limit = limit;
  }

  /**
   * {@code refusal}, told with the write it refused: {@code message} says why the write was to be buffered, and
   * {@code notSent} whether the write surely never reached the data store (see {@link #notSent()}).
   */
  public BufferRefusedException(String message, BufferRefusedException refusal, boolean notSent) {
    super(message, refusal, notSent);
    this.key = refusal.key;
    this.limit = refusal.limit;
  }

  /** The document whose write was refused. */
  public EntityKey key() {
    return key;
  }

  /** Which limit refused the write. */
  public Limit limit() {
    return limit;
  }
}
