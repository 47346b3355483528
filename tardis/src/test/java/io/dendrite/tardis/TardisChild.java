package io.dendrite.tardis;

import static io.dendrite.writeback.change.Change.inc;

import io.dendrite.iq.client.IqClient;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.Entity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * An application process of {@link TardisTwoProcessesIT}: 4 threads increment and read documents {@code first ..
 * first + count - 1} through TARDIS for {@code seconds}, printing {@code intent <id>} before and {@code ack <id>}
 * after every increment, {@code stale <id> <score> <at least>} for a read that misses one of this process's
 * acknowledged increments, {@code failed <id> <exception>} for a read or write that failed, and its mode whenever
 * it changes. Then it waits until nothing is buffered and prints
 * {@code recovered}, or {@code backlog <n>} if that takes over 60 s.
 *
 * <p>Arguments: {@code <jdbc url> <store timeout ms> <cache servers> <first> <count> <seconds> <recovery workers>
 * <workers after seconds>}: the instance the threads use has no recovery workers; after {@code workers after seconds} the process
 * opens a second instance over the same cache with that many, which applies whatever any process left buffered.
 */
public final class TardisChild {
  private static final int THREADS = 4;

  private TardisChild() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    Duration storeTimeout = Duration.ofMillis(Long.parseLong(args[1]));
    String servers = args[2];
    int first = Integer.parseInt(args[3]);
    int count = Integer.parseInt(args[4]);
    long seconds = Long.parseLong(args[5]);
    int workers = Integer.parseInt(args[6]);
    long workersAfter = Long.parseLong(args[7]);
    Solution solution = Solution.valueOf(args[8]);
    AtomicLongArray acknowledged = new AtomicLongArray(first + count);
    IqClient cache =
        IqClient.builder()
            .servers(servers.split(","))
            .requestTimeout(Duration.ofSeconds(2))
            .build();
    ExecutorService threads = Executors.newFixedThreadPool(THREADS + 1);
    try (MySqlStore store = MySqlStore.open(url, THREADS + workers + 2, storeTimeout);
        Tardis tardis = instance(cache, store, solution).drainThreads(0).build();
        LateRecovery recovery = new LateRecovery(cache, store, solution, workers, workersAfter)) {
      System.out.println("started in " + tardis.mode());
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      List<Future<?>> running = new ArrayList<>();
      for (int thread = 0; thread < THREADS; thread++) {
        running.add(
            threads.submit(
                () -> {
                  ThreadLocalRandom random = ThreadLocalRandom.current();
                  while (System.nanoTime() < until) {
                    int id = first + random.nextInt(count);
                    EntityKey key = new EntityKey("users", id);
                    try {
                      if (random.nextBoolean()) {
                        System.out.println("intent " + id);
                        tardis.write(key, ChangeSequence.of(inc("score", 1)));
                        acknowledged.incrementAndGet(id);
                        System.out.println("ack " + id);
                      } else {
                        long atLeast = acknowledged.get(id);
                        long score =
                            tardis
                                .read(key)
                                .map(Entity::fields)
                                .map(fields -> ((Number) fields.get("score")).longValue())
                                .orElse(-1L);
                        if (score < atLeast) {
                          System.out.println("stale " + id + " " + score + " " + atLeast);
                        }
                      }
                    } catch (RuntimeException failed) {
                      // unavailable reads; writes not acknowledged ("intent" without "ack"),
                      // named so that a failing test's output says why
                      System.out.println("failed " + id + " " + failed.getClass().getSimpleName());
                    }
                    Thread.sleep(2);
                  }
                  return null;
                }));
      }
      running.add(
          threads.submit(
              () -> {
                Mode seen = null;
                while (System.nanoTime() < until) {
                  recovery.startIfDue();
                  Mode now = tardis.mode();
                  if (now != seen) {
                    System.out.println("mode " + now);
                    seen = now;
                  }
                  Thread.sleep(20);
                }
                return null;
              }));
      for (Future<?> thread : running) {
        thread.get();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      recovery.start();
      int backlog = tardis.metrics().bufferedDocuments();
      while (backlog > 0 && System.nanoTime() < deadline) {
        Thread.sleep(100);
        backlog = tardis.metrics().bufferedDocuments();
      }
      TardisMetrics metrics = tardis.metrics();
      System.out.println(
          "absorbed "
              + metrics.failedWritesAbsorbed()
              + " appliedFirst "
              + metrics.recoveredByForeground());
      System.out.println(backlog == 0 ? "recovered" : "backlog " + backlog);
    } finally {
      threads.shutdownNow();
      cache.close();
    }
  }

  /** Both instances' settings, shared with the other process. */
  private static Tardis.Builder instance(IqClient cache, MySqlStore store, Solution solution) {
    return Tardis.builder()
        .solution(solution)
        .cache(cache)
        .store(store)
        .technique(Technique.TARDIS)
        .replicas(2)
        .partitions(8)
        .checkInterval(Duration.ofMillis(200));
  }

  /** The second instance, with recovery workers, opened once its time has come. */
  private static final class LateRecovery implements AutoCloseable {
    private final IqClient cache;
    private final MySqlStore store;
    private final Solution solution;
    private final int workers;
    private final long dueAt;
    private Tardis tardis;

    LateRecovery(
        IqClient cache, MySqlStore store, Solution solution, int workers, long afterSeconds) {
      this.cache = cache;
      this.store = store;
      this.solution = solution;
      this.workers = workers;
      this.dueAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(afterSeconds);
    }

    void startIfDue() {
      if (tardis == null && System.nanoTime() - dueAt >= 0) {
        start();
      }
    }

    void start() {
      if (tardis == null) {
        tardis = instance(cache, store, solution).drainThreads(workers).build();
        System.out.println("recovery workers started");
      }
    }

    @Override
    public void close() {
      if (tardis != null) {
        tardis.close();
      }
    }
  }
}
