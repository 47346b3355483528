package io.dendrite.tardis;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The end of a test's load over TARDIS instances, declared as the last resource of the test's try-with-resources so
 * that it closes first: the load's threads stop, then the instances close while the cache servers they flush into
 * are still up. (A {@code finally} block runs after the resources have closed: an instance with log records left to
 * flush then met a stopped server and failed the test.)
 */
final class LoadShutdown {
  private LoadShutdown() {}

  static AutoCloseable of(
      AtomicBoolean stop, ExecutorService threads, List<? extends AutoCloseable> instances) {
    return () -> {
      stop.set(true);
      threads.shutdownNow();
      for (AutoCloseable instance : instances) {
        instance.close();
      }
    };
  }
}
