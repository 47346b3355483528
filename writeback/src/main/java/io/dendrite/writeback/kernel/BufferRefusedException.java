package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.EntityKey;
import java.util.Optional;

/**
 * Pinned memory (or a cache server's memory) refused to buffer a write, and the buffered writes are set to refuse rather than write through
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
    SERVER_PINNED_MEMORY,
    /** A cache server that evicts nothing had no memory left (stock memcached run with {@code -M}). */
    SERVER_MEMORY;

    /** The limit behind a server's refusal to store: {@link Outcome#PINNED_MEMORY_FULL} or {@link Outcome#MEMORY_FULL}. */
    static Optional<Limit> ofServer(Outcome refusal) {
      return switch (refusal) {
        case PINNED_MEMORY_FULL -> Optional.of(SERVER_PINNED_MEMORY);
        case MEMORY_FULL -> Optional.of(SERVER_MEMORY);
        default -> Optional.empty();
      };
    }
  }

  private final transient EntityKey key;
  private final Limit limit;

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
