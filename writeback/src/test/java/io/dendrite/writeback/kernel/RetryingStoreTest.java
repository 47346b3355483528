package io.dendrite.writeback.kernel;

import static io.dendrite.writeback.change.Change.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Logic of the store's retries, against an in-memory store that fails on cue (no database needed for it). */
class RetryingStoreTest {

  /** Times out (as a read timeout of its driver would) on any batch larger than {@code largestItFinishes}. */
  private static final class SlowStore implements DataStore {
    final int largestItFinishes;
    final List<Integer> attemptedSizes = new ArrayList<>();
    final List<EntityKey> applied = new ArrayList<>();
    boolean refuseConnections;
    long millisBeforeTimingOut;

    SlowStore(int largestItFinishes) {
      this.largestItFinishes = largestItFinishes;
    }

    @Override
    public void apply(List<EntityChanges> batch) {
      attemptedSizes.add(batch.size());
      if (refuseConnections) {
        throw new DataStoreUnavailableException(
            "refused", new ConnectException("Connection refused"));
      }
      if (batch.size() > largestItFinishes) {
        sleep(millisBeforeTimingOut);
        throw new DataStoreUnavailableException(
            "slow", new SocketTimeoutException("Read timed out"));
      }
      batch.forEach(entity -> applied.add(entity.key()));
    }

    @Override
    public Optional<Entity> read(EntityKey key) {
      return Optional.empty();
    }

    @Override
    public List<Entity> readRange(
        String collection, String field, Object lowerBound, Object upperBound) {
      return List.of();
    }

    @Override
    public void close() {}
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new AssertionError(interrupted);
    }
  }

  private static List<EntityChanges> batch(int size) {
    return IntStream.range(0, size)
        .mapToObj(i -> new EntityChanges(new EntityKey("t", i), ChangeSequence.of(set("f", i))))
        .toList();
  }

  @Test
  void aBatchTheStoreCannotFinishInTimeIsAppliedInHalvesUntilItCan() {
    SlowStore store = new SlowStore(16);
    LongAdder retries = new LongAdder();
    new RetryingStore(store, Duration.ofSeconds(1), retries).apply(batch(64));

    assertThat(store.applied)
        .extracting(EntityKey::id)
        .containsExactlyElementsOf(IntStream.range(0, 64).boxed().map(Object.class::cast).toList());
    assertThat(store.attemptedSizes).containsExactly(64, 32, 16, 16, 32, 16, 16);
    assertThat(retries.sum()).isEqualTo(3);
  }

  @Test
  void aRefusedBatchIsRetriedWholeUntilTheDeadlineNotSplit() {
    SlowStore store = new SlowStore(64);
    store.refuseConnections = true;
    RetryingStore retrying = new RetryingStore(store, Duration.ofMillis(100), new LongAdder());

    assertThatThrownBy(() -> retrying.apply(batch(8)))
        .isInstanceOf(DataStoreUnavailableException.class);
    assertThat(store.attemptedSizes).hasSizeGreaterThan(1).containsOnly(8);
    assertThat(store.applied).isEmpty();
  }

  /**
   * A database that answers nothing (black-holed): the halving must stop at the retry deadline, because the caller
   * holds the batch's locks meanwhile. Without it, the halves went down to a single document (7 store timeouts for
   * 64 documents) and only then did the retry deadline start: a writer of those documents waited out its lock
   * timeout (DatabaseFaultsIT under load).
   */
  @Test
  void halvingATimedOutBatchStopsAtTheDeadline() {
    SlowStore store = new SlowStore(0);
    store.millisBeforeTimingOut = 20;
    RetryingStore retrying = new RetryingStore(store, Duration.ofMillis(100), new LongAdder());

    assertThatThrownBy(() -> retrying.apply(batch(64)))
        .isInstanceOf(DataStoreUnavailableException.class)
        .hasRootCauseInstanceOf(SocketTimeoutException.class);
    // 20 ms or more per attempt against a 100 ms deadline: at most 6 attempts (the halving alone
    // down to one document is 7). How many fit depends on the machine's load, so only the bound
    // and the first are checked (a busy machine once fit two, where this asked for three).
    assertThat(store.attemptedSizes).hasSizeLessThanOrEqualTo(6).startsWith(64);
    assertThat(store.applied).isEmpty();
  }
}
