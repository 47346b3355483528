package io.dendrite.ycsb.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Asks every IQ server of a run for its {@code stats} once a second and keeps the sum of
 * {@code pinned_bytes} and {@code bytes} over the servers.
 */
public final class PinnedMemoryPoller implements AutoCloseable {

  private final List<ServerProcess> servers;
  private final List<PinnedSample> samples = new ArrayList<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "pinned-memory-poller");
            t.setDaemon(true);
            return t;
          });
  private final long startNanos = System.nanoTime();

  public PinnedMemoryPoller(List<ServerProcess> servers) {
    this.servers = List.copyOf(servers);
    timer.scheduleAtFixedRate(this::poll, 0, 1, TimeUnit.SECONDS);
  }

  private void poll() {
    long pinned = 0;
    long bytes = 0;
    for (ServerProcess server : servers) {
      try {
        Map<String, Long> stats = server.stats();
        pinned += stats.getOrDefault("pinned_bytes", 0L);
        bytes += stats.getOrDefault("bytes", 0L);
      } catch (IOException e) {
        return; // a server that does not answer this second gives no sample rather than a wrong sum
      }
    }
    double seconds = (System.nanoTime() - startNanos) / 1e9;
    synchronized (samples) {
      samples.add(new PinnedSample(seconds, pinned, bytes));
    }
  }

  /** Stops polling and returns what was sampled. */
  public List<PinnedSample> stop() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (samples) {
      return List.copyOf(samples);
    }
  }

  @Override
  public void close() {
    stop();
  }
}
