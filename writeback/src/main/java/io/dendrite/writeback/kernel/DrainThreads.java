package io.dendrite.writeback.kernel;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.stream.IntStream;

/**
 * The background drain threads of an engine: its drain passes dealt round-robin over {@code count} daemon threads.
 * A thread rests after a round whose passes each found fewer than {@code busyAtLeast} items (see {@link
 * DrainWorker}).
 */
public final class DrainThreads implements AutoCloseable {
  private final List<DrainWorker> workers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();

  public DrainThreads(
      String name, int count, List<IntSupplier> passes, Duration idlePause, int busyAtLeast) {
    for (int worker = 0; worker < count; worker++) {
      int first = worker;
      List<IntSupplier> share =
          IntStream.range(0, passes.size())
              .filter(index -> index % count == first)
              .mapToObj(passes::get)
              .toList();
      DrainWorker drainWorker = new DrainWorker(share, idlePause, busyAtLeast);
      Thread thread = new Thread(drainWorker, name + "-" + worker);
      thread.setDaemon(true);
      workers.add(drainWorker);
      threads.add(thread);
      thread.start();
    }
  }

  /** Stops the threads, waiting for each to finish the pass it is in. */
  @Override
  public void close() {
    workers.forEach(DrainWorker::stop);
    threads.forEach(Thread::interrupt);
    for (Thread thread : threads) {
      try {
        thread.join();
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
