package io.dendrite.core.interval;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.core.Interval;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class BufferedWriteIndexTest {

  private final BufferedWriteIndex<Integer, String> index = new BufferedWriteIndex<>();

  @Test
  void overlappingWritesComeBackInSerialOrderNotIntervalOrder() {
    index.append(Interval.of(5, 6), "first");
    index.append(Interval.of(1, 10), "second");
    index.append(Interval.of(0, 5), "third");
    index.append(Interval.of(7, 9), "elsewhere");

    assertThat(index.overlapping(Interval.of(4, 5)))
        .extracting(BufferedWriteIndex.Entry::write)
        .containsExactly("first", "second", "third");
    assertThat(index.overlapping(Interval.of(4, 5)))
        .extracting(BufferedWriteIndex.Entry::sequence)
        .containsExactly(1L, 2L, 3L);
  }

  @Test
  void everyEntryComesBackInSerialOrderUntilRemoved() {
    BufferedWriteIndex.Entry<Integer, String> first = index.append(Interval.of(8, 9), "first");
    index.append(Interval.of(1, 2), "second");
    index.append(Interval.of(5, 5), "third");

    assertThat(index.entries())
        .extracting(BufferedWriteIndex.Entry::write)
        .containsExactly("first", "second", "third");
    index.remove(first);
    assertThat(index.entries())
        .extracting(BufferedWriteIndex.Entry::write)
        .containsExactly("second", "third");
  }

  @Test
  void anAppliedWriteIsRemovedOnce() {
    BufferedWriteIndex.Entry<Integer, String> first = index.append(Interval.point(3), "w");
    BufferedWriteIndex.Entry<Integer, String> second = index.append(Interval.point(3), "w");

    assertThat(index.remove(first)).isTrue();
    assertThat(index.remove(first)).isFalse();
    assertThat(index.overlapping(Interval.point(3))).containsExactly(second);
    assertThat(index.size()).isEqualTo(1);
  }

  @Test
  void concurrentAppendsGetDistinctConsecutiveSequences() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<?>> appenders = new ArrayList<>();
    try {
      for (int t = 0; t < 4; t++) {
        appenders.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 2_500; i++) {
                    index.append(Interval.of(i % 50, i % 50 + 10), "w");
                  }
                }));
      }
      for (Future<?> appender : appenders) {
        appender.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(index.overlapping(Interval.of(0, 100)))
        .extracting(BufferedWriteIndex.Entry::sequence)
        .containsExactlyElementsOf(LongStream.rangeClosed(1, 10_000).boxed().toList());
  }
}
