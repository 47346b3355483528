package io.dendrite.coordination;

import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Not a test (no assertion; neither Surefire nor Failsafe picks it up by name): times a write and a missing get
 * served locally against the same forwarded to another process's {@link PartitionedDendrite}, two in one JVM over an
 * in-memory table, one thread at a time, to tell the RPC's cost from queueing under load. Run it with {@code mvn
 * verify -pl dendrite-coordination -Dtest=none -Dit.test=ForwardingLatencyProbe}.
 */
@ExtendWith(RealServers.class)
class ForwardingLatencyProbe {
  private static final int ROWS = 600;
  private static final int ROUNDS = 3000;

  /** Latencies kept to within 0.1 % of their value (three significant digits). */
  private static final int SIGNIFICANT_DIGITS = 3;

  @Test
  void timeLocalAgainstForwarded(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(2);
        PartitionedDendrite<Integer, Scores.Score> a = process(zk, cacheTier, table, "a");
        PartitionedDendrite<Integer, Scores.Score> b = process(zk, cacheTier, table, "b")) {
      a.awaitSettled(2, Duration.ofSeconds(30));
      b.awaitSettled(2, Duration.ofSeconds(30));
      List<Integer> local = new ArrayList<>();
      List<Integer> remote = new ArrayList<>();
      List<String> ranges = a.ranges();
      for (int index = 0; index < ranges.size(); index++) {
        int lower = index * (ROWS / ranges.size());
        (a.servedRanges().contains(ranges.get(index)) ? local : remote).add(lower);
      }
      System.out.println("a serves " + a.servedRanges() + ", b serves " + b.servedRanges());
      for (int pass = 0; pass < 2; pass++) { // the first warms up
        Histogram localWrites = new Histogram(SIGNIFICANT_DIGITS);
        Histogram remoteWrites = new Histogram(SIGNIFICANT_DIGITS);
        Histogram localGets = new Histogram(SIGNIFICANT_DIGITS);
        Histogram remoteGets = new Histogram(SIGNIFICANT_DIGITS);
        for (int i = 0; i < ROUNDS; i++) {
          int near = local.get(i % local.size()) + i % 10;
          int far = remote.get(i % remote.size()) + i % 10;
          localWrites.recordValue(
              time(() -> a.write("set", near, near, new Scores.SetVal(near, 1))));
          remoteWrites.recordValue(time(() -> a.write("set", far, far, new Scores.SetVal(far, 1))));
          localGets.recordValue(time(() -> a.get("range", near, near)));
          remoteGets.recordValue(time(() -> a.get("range", far, far)));
        }
        if (pass == 1) {
          System.out.printf(
              "µs median / p90 / p99: local write %s, forwarded write %s, local get %s,"
                  + " forwarded get %s%n",
              percentiles(localWrites),
              percentiles(remoteWrites),
              percentiles(localGets),
              percentiles(remoteGets));
          System.out.println("a: " + a.metrics() + "; b: " + b.metrics());
        }
      }
      for (int threads : new int[] {2, 4}) {
        System.out.printf(
            "%d threads at once, µs median / p90 / p99: local writes %s, forwarded writes %s%n",
            threads,
            percentiles(concurrently(threads, i -> local.get(i % local.size()) + i % 10, a)),
            percentiles(concurrently(threads, i -> remote.get(i % remote.size()) + i % 10, a)));
      }
    }
  }

  /** Times {@code threads} threads each writing {@code ROUNDS / threads} rows through {@code process}. */
  private static Histogram concurrently(
      int threads,
      java.util.function.IntUnaryOperator row,
      PartitionedDendrite<Integer, Scores.Score> process)
      throws InterruptedException {
    Histogram micros = new ConcurrentHistogram(SIGNIFICANT_DIGITS);
    List<Thread> running = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int first = t * (ROUNDS / threads);
      Thread thread =
          new Thread(
              () -> {
                for (int i = first; i < first + ROUNDS / threads; i++) {
                  int id = row.applyAsInt(i);
                  micros.recordValue(
                      time(() -> process.write("set", id, id, new Scores.SetVal(id, 2))));
                }
              });
      running.add(thread);
      thread.start();
    }
    for (Thread thread : running) {
      thread.join();
    }
    return micros;
  }

  private static PartitionedDendrite<Integer, Scores.Score> process(
      ZooKeeperAddress zk,
      EmbeddedIqServers cacheTier,
      Map<Integer, Scores.Score> table,
      String member) {
    return (PartitionedDendrite<Integer, Scores.Score>)
        InMemoryScores.dendrite(cacheTier.client, table, ROWS - 1)
            .deployment(
                ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                    .ranges(6)
                    .forwardingSecurity(
                        ForwardingSecurity.sharedSecret(
                            "the probe's test-only secret"
                                .getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                    .member(member))
            .build();
  }

  private static long time(Runnable operation) {
    long start = System.nanoTime();
    operation.run();
    return (System.nanoTime() - start) / 1000;
  }

  private static String percentiles(Histogram micros) {
    return micros.getValueAtPercentile(50)
        + "/"
        + micros.getValueAtPercentile(90)
        + "/"
        + micros.getValueAtPercentile(99);
  }
}
