package io.dendrite.writeback.kernel;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.StoreFencedOutException;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The data store seen through bounded exponential backoff: an operation that meets {@link
 * DataStoreUnavailableException} is retried (each retry counted) until {@code deadline} has passed, then the last
 * failure is thrown. Only idempotent sequences are applied through it, so a retry of an attempt whose outcome was
 * unknown is safe. The deadline is kept short because callers hold a lease meanwhile; a drain that gives up leaves
 * the buffered write in place and tries again on a later pass, so nothing is dropped.
 */
public final class RetryingStore {
  private static final Duration FIRST_DELAY = Duration.ofMillis(10);
  private static final Duration MAX_DELAY = Duration.ofMillis(500);

  private final DataStore store;
  private final Duration deadline;
  private final LongAdder retries;

  public RetryingStore(DataStore store, Duration deadline, LongAdder retries) {
    this.store = store;
    this.deadline = deadline;
    this.retries = retries;
  }

  public Optional<Entity> read(EntityKey key) {
    return retry(() -> store.read(key));
  }

  /** Applies an idempotent sequence; nothing is sent for an empty one. */
  public void apply(EntityKey key, ChangeSequence idempotent) {
    if (idempotent.isEmpty()) {
      return;
    }
    retry(
        () -> {
          store.apply(List.of(new EntityChanges(key, idempotent)));
          return null;
        });
  }

  /**
   * Applies a batch of idempotent sequences in one store round. A batch that the store did not finish within its
   * reply timeout is applied again in halves (each split further if it times out too): a database slowed down by
   * load would otherwise get the same too-large batch again and again, each abandoned attempt still running on its
   * side and slowing it further, and the drain would never finish. Only a single sequence is retried whole. All of
   * it within the deadline, like any retry: the caller holds the batch's locks meanwhile, and a database that does
   * not answer at all (black-holed) must not keep writers of those documents waiting past their lock timeout; the
   * time-out is then thrown, and the caller releases the locks and drains smaller batches later.
   */
  public void apply(List<EntityChanges> idempotent) {
    apply(idempotent, System.nanoTime() + deadline.toNanos());
  }

  private void apply(List<EntityChanges> idempotent, long giveUpAt) {
    if (idempotent.size() > 1) {
      try {
        store.apply(idempotent);
        return;
      } catch (StoreFencedOutException refused) {
        throw refused;
      } catch (DataStoreUnavailableException unavailable) {
        retries.increment();
        if (timedOut(unavailable)) {
          if (System.nanoTime() >= giveUpAt) {
            throw unavailable;
          }
          int half = idempotent.size() / 2;
          apply(List.copyOf(idempotent.subList(0, half)), giveUpAt);
          apply(List.copyOf(idempotent.subList(half, idempotent.size())), giveUpAt);
          return;
        }
        // refused or dropped: the size of the batch is not the problem; retried whole below
      }
    }
    retry(
        () -> {
          store.apply(idempotent);
          return null;
        },
        giveUpAt);
  }

  /** Whether the store was reached but did not answer in time (as opposed to refusing or dropping the connection). */
  public static boolean timedOut(Throwable failure) {
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (cause instanceof java.net.SocketTimeoutException
          || cause instanceof java.sql.SQLTimeoutException) {
        return true;
      }
    }
    return false;
  }

  /** Applies any sequence exactly once in effect: converted against the current state first, so it may be retried. */
  public void applyConverted(EntityKey key, ChangeSequence changes) {
    apply(
        key,
        changes.isIdempotent() ? changes : changes.toIdempotent(read(key).map(Entity::fields)));
  }

  /** Runs {@code operation}, which must be safe to repeat (idempotent or exactly-once), with the retries above. */
  public <T> T retry(Supplier<T> operation) {
    return retry(operation, System.nanoTime() + deadline.toNanos());
  }

  /** {@link #retry(Supplier)} until {@code giveUpAt} ({@link System#nanoTime()}); tried at least once. */
  private <T> T retry(Supplier<T> operation, long giveUpAt) {
    long delayMillis = FIRST_DELAY.toMillis();
    while (true) {
      try {
        return operation.get();
      } catch (StoreFencedOutException refused) {
        throw refused; // a later owner has the range: retrying cannot help
      } catch (DataStoreUnavailableException unavailable) {
        if (System.nanoTime() + delayMillis * 1_000_000 > giveUpAt) {
          throw unavailable;
        }
        try {
          Thread.sleep(delayMillis);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw unavailable;
        }
        retries.increment();
        delayMillis = Math.min(delayMillis * 2, MAX_DELAY.toMillis());
      }
    }
  }
}
