package io.dendrite.core.interval;

import static io.dendrite.core.interval.LeaseMode.EXCLUSIVE;
import static io.dendrite.core.interval.LeaseMode.SHARED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.Interval;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IntervalLeasesTest {

  private static final Duration NO_WAIT = Duration.ZERO;
  private static final Duration PATIENCE = Duration.ofSeconds(10);

  private final IntervalLeases<Integer> leases = new IntervalLeases<>(Duration.ofMinutes(1));
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void sharedLeasesOnOverlappingIntervalsAreCompatible() throws Exception {
    try (IntervalLease<Integer> first = leases.acquire(Interval.of(1, 5), SHARED, NO_WAIT);
        IntervalLease<Integer> second = leases.acquire(Interval.of(3, 8), SHARED, NO_WAIT);
        IntervalLease<Integer> third = leases.acquire(Interval.point(5), SHARED, NO_WAIT)) {
      assertThat(List.of(first, second, third))
          .extracting(IntervalLease::mode)
          .containsOnly(SHARED);
      assertThat(second.interval()).isEqualTo(Interval.of(3, 8));
    }
  }

  @Test
  void exclusiveConflictsWithEveryOverlappingLease() throws Exception {
    try (IntervalLease<Integer> shared = leases.acquire(Interval.of(1, 5), SHARED, NO_WAIT);
        IntervalLease<Integer> exclusive =
            leases.acquire(Interval.of(10, 20), EXCLUSIVE, NO_WAIT)) {
      assertRefused(Interval.point(5), EXCLUSIVE); // shares the endpoint 5 with the Shared lease
      assertRefused(Interval.of(0, 100), EXCLUSIVE);
      assertRefused(Interval.point(10), SHARED);
      assertRefused(Interval.of(15, 16), EXCLUSIVE);
      try (IntervalLease<Integer> between = leases.acquire(Interval.of(6, 9), EXCLUSIVE, NO_WAIT)) {
        assertThat(between.isExpired()).isFalse();
      }
    }
    try (IntervalLease<Integer> afterRelease =
        leases.acquire(Interval.of(0, 100), EXCLUSIVE, NO_WAIT)) {
      assertThat(afterRelease.mode()).isEqualTo(EXCLUSIVE);
    }
  }

  @Test
  void releaseWakesAWaitingRequest() throws Exception {
    IntervalLease<Integer> shared = leases.acquire(Interval.of(1, 5), SHARED, NO_WAIT);
    Future<IntervalLease<Integer>> writer = acquireQueued(Interval.of(4, 9), EXCLUSIVE);

    shared.close();
    shared.close(); // closing twice is harmless
    try (IntervalLease<Integer> exclusive = writer.get(10, TimeUnit.SECONDS)) {
      assertThat(exclusive.interval()).isEqualTo(Interval.of(4, 9));
    }
  }

  @Test
  void anExpiredLeaseStopsBlockingAndSaysSo() throws Exception {
    IntervalLeases<Integer> shortLived = new IntervalLeases<>(Duration.ofMillis(200));
    long start = System.nanoTime();
    IntervalLease<Integer> abandoned = shortLived.acquire(Interval.of(1, 10), EXCLUSIVE, NO_WAIT);
    assertThat(abandoned.isExpired()).isFalse();

    try (IntervalLease<Integer> next = shortLived.acquire(Interval.point(5), EXCLUSIVE, PATIENCE)) {
      long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(waitedMillis)
          .isBetween(200L, 5_000L); // woken by the expiry, not by a signal or the timeout
      assertThat(abandoned.isExpired()).isTrue();
      assertThat(next.isExpired()).isFalse();
      abandoned.close(); // must not release the lease that replaced it
      assertThatThrownBy(() -> shortLived.acquire(Interval.point(5), SHARED, NO_WAIT))
          .isInstanceOf(TimeoutException.class);
    }
  }

  @Test
  void awaitingSharedLeasesWaitsForThoseGrantedNowAndNoOthers() throws Exception {
    IntervalLease<Integer> filling = leases.acquire(Interval.of(0, 10), SHARED, NO_WAIT);
    try (IntervalLease<Integer> writer = leases.acquire(Interval.of(20, 30), EXCLUSIVE, NO_WAIT);
        IntervalLease<Integer> elsewhere = leases.acquire(Interval.of(40, 50), SHARED, NO_WAIT)) {
      // `later` is granted only once the repair waits: with a fixed sleep here, a pool thread
      // scheduled late began after it and waited for it too, until repair.get timed out.
      Future<?> repair =
          submitAndAwaitTimedWait(
              () -> {
                leases.awaitSharedLeasesGrantedNow(Interval.of(5, 25));
                return null;
              },
              "repair of [5, 25]");
      assertThat(repair).as("waits for the overlapping Shared lease").isNotDone();
      try (IntervalLease<Integer> later = leases.acquire(Interval.of(5, 6), SHARED, NO_WAIT)) {
        filling.close();
        repair.get(10, TimeUnit.SECONDS); // not for the Exclusive one, nor one granted later
      }
    }
  }

  @Test
  void awaitingSharedLeasesEndsWhenTheyLapse() throws Exception {
    IntervalLeases<Integer> shortLived = new IntervalLeases<>(Duration.ofMillis(200));
    // Taken before the grant: the lease lapses 200 ms after it, however late this thread runs.
    long start = System.nanoTime();
    IntervalLease<Integer> abandoned = shortLived.acquire(Interval.of(0, 10), SHARED, NO_WAIT);
    Thread.currentThread().interrupt();
    shortLived.awaitSharedLeasesGrantedNow(Interval.of(3, 3));
    assertThat(Thread.interrupted()).as("the interrupt is kept, not obeyed").isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isBetween(Duration.ofMillis(150), PATIENCE);
    assertThat(abandoned.runIfUnexpired(() -> {}))
        .as("its holder can no longer register")
        .isFalse();
  }

  @Test
  void aWaitingWriterHoldsBackLaterOverlappingReaders() throws Exception {
    IntervalLease<Integer> reader = leases.acquire(Interval.of(0, 10), SHARED, NO_WAIT);
    Future<IntervalLease<Integer>> writer = acquireQueued(Interval.of(5, 6), EXCLUSIVE);

    assertRefused(Interval.of(0, 10), SHARED);
    try (IntervalLease<Integer> elsewhere = leases.acquire(Interval.of(7, 10), SHARED, NO_WAIT)) {
      assertThat(elsewhere.mode()).isEqualTo(SHARED); // no overlap with the waiting writer
    }
    reader.close();
    writer.get(10, TimeUnit.SECONDS).close();
  }

  @Test
  void anAbandonedRequestStopsHoldingOthersBack() throws Exception {
    try (IntervalLease<Integer> reader = leases.acquire(Interval.of(0, 10), SHARED, NO_WAIT)) {
      acquireQueued(Interval.of(5, 6), EXCLUSIVE).cancel(true); // interrupts the waiting thread
      assertThatThrownBy(() -> leases.acquire(Interval.of(5, 6), EXCLUSIVE, Duration.ofMillis(30)))
          .isInstanceOf(TimeoutException.class); // times out instead

      try (IntervalLease<Integer> later =
          leases.acquire(Interval.point(5), SHARED, Duration.ofSeconds(5))) {
        assertThat(later.mode()).isEqualTo(SHARED);
      }
      assertThat(reader.isExpired()).isFalse();
    }
  }

  @Test
  void aWriterGetsThroughASteadyStreamOfOverlappingReaders() throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger readsDone = new AtomicInteger();
    List<Future<?>> readers = new ArrayList<>();
    for (int r = 0; r < 4; r++) {
      int offset = r;
      readers.add(
          threads.submit(
              () -> {
                while (!stop.get()) {
                  // Overlapping Shared leases held back to back: some reader nearly always holds
                  // [0, 100].
                  try (IntervalLease<Integer> lease =
                      leases.acquire(Interval.of(offset, 100 - offset), SHARED, PATIENCE)) {
                    Thread.sleep(5);
                  }
                  readsDone.incrementAndGet();
                }
                return null;
              }));
    }
    while (readsDone.get() < 20) {
      Thread.sleep(1);
    }
    long start = System.nanoTime();
    try (IntervalLease<Integer> writer =
        leases.acquire(Interval.point(50), EXCLUSIVE, Duration.ofSeconds(5))) {
      // It waits only for the leases held when it arrived (5 ms each); starved, it would time out.
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000);
    } finally {
      stop.set(true);
    }
    for (Future<?> reader : readers) {
      reader.get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void concurrentHoldersNeverConflict() throws Exception {
    int points = 20;
    AtomicIntegerArray readers = new AtomicIntegerArray(points + 1);
    AtomicIntegerArray writers = new AtomicIntegerArray(points + 1);
    AtomicInteger violations = new AtomicInteger();
    AtomicInteger exclusiveGrants = new AtomicInteger();
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      workers.add(
          threads.submit(
              () -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                for (int i = 0; i < 2_000; i++) {
                  int lo = random.nextInt(points);
                  Interval<Integer> interval =
                      Interval.of(lo, Math.min(points, lo + random.nextInt(4)));
                  LeaseMode mode = random.nextInt(3) == 0 ? EXCLUSIVE : SHARED;
                  try (IntervalLease<Integer> lease = leases.acquire(interval, mode, PATIENCE)) {
                    for (int p = interval.lo(); p <= interval.hi(); p++) {
                      boolean clash =
                          mode == EXCLUSIVE
                              ? writers.incrementAndGet(p) != 1 || readers.get(p) != 0
                              : readers.incrementAndGet(p) < 1 || writers.get(p) != 0;
                      if (clash) {
                        violations.incrementAndGet();
                      }
                    }
                    Thread.yield();
                    for (int p = interval.lo(); p <= interval.hi(); p++) {
                      (mode == EXCLUSIVE ? writers : readers).decrementAndGet(p);
                    }
                    if (mode == EXCLUSIVE) {
                      exclusiveGrants.incrementAndGet();
                    }
                  }
                }
                return null;
              }));
    }
    for (Future<?> worker : workers) {
      worker.get(50, TimeUnit.SECONDS);
    }
    assertThat(violations.get()).isZero();
    assertThat(exclusiveGrants.get()).isPositive();
  }

  @Test
  void rejectsNonsenseDurations() {
    assertThatThrownBy(() -> new IntervalLeases<Integer>(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> leases.acquire(Interval.point(1), SHARED, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private void assertRefused(Interval<Integer> interval, LeaseMode mode) {
    assertThatThrownBy(() -> leases.acquire(interval, mode, NO_WAIT))
        .isInstanceOf(TimeoutException.class)
        .hasMessageContaining(mode + " lease on " + interval);
  }

  /** Starts {@code acquire} on another thread and returns once that thread waits in the queue. */
  private Future<IntervalLease<Integer>> acquireQueued(Interval<Integer> interval, LeaseMode mode)
      throws InterruptedException {
    // The only timed wait inside acquire is the wait of a queued request.
    return submitAndAwaitTimedWait(
        () -> leases.acquire(interval, mode, PATIENCE), "request on " + interval);
  }

  /**
   * Starts {@code task} on another thread and returns once that thread is in a timed wait (the only one in {@code
   * acquire} and {@code awaitSharedLeasesGrantedNow} is their wait on the leases), so that what the test does next
   * happens after the task began waiting, however late its thread was scheduled.
   */
  private <T> Future<T> submitAndAwaitTimedWait(Callable<T> task, String what)
      throws InterruptedException {
    AtomicReference<Thread> runner = new AtomicReference<>();
    Future<T> future =
        threads.submit(
            () -> {
              runner.set(Thread.currentThread());
              return task.call();
            });
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (runner.get() == null || runner.get().getState() != Thread.State.TIMED_WAITING) {
      assertThat(future.isDone()).as("%s did not wait", what).isFalse();
      assertThat(System.nanoTime() - deadline)
          .as("%s waits within %s", what, PATIENCE)
          .isNegative();
      Thread.sleep(1);
    }
    return future;
  }
}
