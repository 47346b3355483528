package io.dendrite.core.interval;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.Interval;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class PredicateIndexTest {

  private final PredicateIndex<Integer, String> index = new PredicateIndex<>();

  @Test
  void aWriteImpactsOverlappingContainedAndContainingPredicates() {
    index.register(Interval.of(0, 100), "containing");
    index.register(Interval.of(12, 14), "contained");
    index.register(Interval.of(18, 30), "overlapping");
    index.register(Interval.of(20, 25), "touching"); // shares the bound 20 with the write
    index.register(Interval.of(21, 25), "after");
    index.register(Interval.point(9), "before");

    assertThat(index.impactedBy(Interval.of(10, 20)))
        .extracting(IntervalTree.Entry::value)
        .containsExactly("containing", "contained", "overlapping", "touching");
    assertThat(index.impactedBy(Interval.point(9)))
        .extracting(IntervalTree.Entry::value)
        .containsExactly("containing", "before");
  }

  @Test
  void containingFindsPredicatesThatCanAnswerANarrowerOne() {
    index.register(Interval.of(0, 100), "wide");
    index.register(Interval.of(10, 20), "same");
    index.register(Interval.of(11, 20), "narrower");

    assertThat(index.containing(Interval.of(10, 20)))
        .extracting(IntervalTree.Entry::value)
        .containsExactly("wide", "same");
  }

  @Test
  void aPairIsRegisteredOnceAndUnregisteredOnce() {
    assertThat(index.register(Interval.of(1, 2), "k")).isTrue();
    assertThat(index.register(Interval.of(1, 2), "k")).isFalse();
    assertThat(index.register(Interval.of(1, 2), "other")).isTrue();
    assertThat(index.size()).isEqualTo(2);

    assertThat(index.unregister(Interval.of(1, 2), "k")).isTrue();
    assertThat(index.unregister(Interval.of(1, 2), "k")).isFalse();
    assertThat(index.impactedBy(Interval.point(1)))
        .extracting(IntervalTree.Entry::value)
        .containsExactly("other");
  }

  @Test
  void concurrentRegistrationsAndQueriesLoseNothing() throws Exception {
    int threads = 4;
    int perThread = 5_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
    AtomicBoolean writing = new AtomicBoolean(true);
    // Writers start only once both readers are querying: on a busy machine the readers could
    // otherwise be scheduled after the writers finished, and nothing would have run concurrently.
    CountDownLatch readersQuerying = new CountDownLatch(2);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        writers.add(
            pool.submit(
                () -> {
                  readersQuerying.await();
                  for (int i = 0; i < perThread; i++) {
                    index.register(Interval.of(i, i + 3), thread + ":" + i);
                    if (i % 2 == 1) {
                      index.unregister(Interval.of(i - 1, i + 2), thread + ":" + (i - 1));
                    }
                  }
                  return null;
                }));
      }
      List<Future<Integer>> readers = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        readers.add(
            pool.submit(
                () -> {
                  int queries = 0;
                  while (writing.get() || queries == 0) {
                    for (IntervalTree.Entry<Integer, String> entry :
                        index.impactedBy(Interval.point(queries % perThread))) {
                      assertThat(entry.interval().overlaps(Interval.point(queries % perThread)))
                          .isTrue();
                    }
                    queries++;
                    if (queries == 1) {
                      readersQuerying.countDown();
                    }
                  }
                  return queries;
                }));
      }
      for (Future<?> writer : writers) {
        writer.get(30, TimeUnit.SECONDS);
      }
      writing.set(false);
      for (Future<Integer> reader : readers) {
        assertThat(reader.get(30, TimeUnit.SECONDS)).isPositive();
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(index.size()).isEqualTo(threads * perThread / 2);
    assertThat(index.impactedBy(Interval.point(1_001)))
        .hasSize(threads * 2); // [999,1002] and [1001,1004] per thread
  }
}
