package io.dendrite.ycsb;

import io.dendrite.tardis.Mode;
import io.dendrite.tardis.Tardis;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * When a {@link Tardis} entered failed mode, when recovery began and when it ended (normal mode again), and its
 * backlog over time, for the stats file: the runner sets these wall-clock times against the moments it cut and
 * restored the database. The mode is a local read, looked at every {@value #MODE_MILLIS} ms; the backlog ({@link
 * Tardis#metrics()}, a read of every partition) every {@value #BACKLOG_MILLIS} ms.
 *
 * <p>Stats entries (times in milliseconds since the epoch, absent when it never happened): {@code
 * tardis.failedAtMs} (first failed mode), {@code tardis.normalAtMs} (the last return to normal mode after a
 * failure; the mode may go to recovery and back to failed more than once while the database is cut, as a request in
 * flight at the cut succeeds), {@code tardis.peakBuffered}, and {@code tardis.backlog}: {@code time:documents}
 * samples separated by commas.
 */
final class RecoveryTimeline {
  private static final long MODE_MILLIS = 100;
  private static final long BACKLOG_MILLIS = 1_000;

  private final Tardis tardis;
  private final Thread thread;
  private final StringJoiner backlog = new StringJoiner(",");
  private volatile boolean stopped;
  private long failedAt = -1;
  private long normalAt = -1;
  private int peakBuffered;

  private RecoveryTimeline(Tardis tardis) {
    this.tardis = tardis;
    this.thread = new Thread(this::follow, "tardis-recovery-timeline");
    thread.setDaemon(true);
  }

  static RecoveryTimeline follow(Tardis tardis) {
    RecoveryTimeline timeline = new RecoveryTimeline(tardis);
    timeline.thread.start();
    return timeline;
  }

  private void follow() {
    long nextBacklog = 0;
    Mode last = Mode.NORMAL;
    while (!stopped) {
      long now = System.currentTimeMillis();
      Mode mode = tardis.mode();
      synchronized (this) {
        if (mode == Mode.FAILED && failedAt < 0) {
          failedAt = now;
        }
        if (mode == Mode.NORMAL && last != Mode.NORMAL) {
          normalAt = now;
        }
      }
      last = mode;
      if (now >= nextBacklog) {
        nextBacklog = now + BACKLOG_MILLIS;
        try {
          int buffered = tardis.metrics().bufferedDocuments();
          synchronized (this) {
            peakBuffered = Math.max(peakBuffered, buffered);
            backlog.add(now + ":" + buffered);
          }
        } catch (RuntimeException cacheUnreachable) {
          // a sample missed; the next one is a second away
        }
      }
      try {
        Thread.sleep(MODE_MILLIS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Stops following (idempotent) and returns the stats entries. */
  Map<String, String> stop() {
    stopped = true;
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Map<String, String> stats = new LinkedHashMap<>();
    synchronized (this) {
      if (failedAt >= 0) {
        stats.put("tardis.failedAtMs", Long.toString(failedAt));
      }
      if (failedAt >= 0 && normalAt > failedAt) {
        stats.put("tardis.normalAtMs", Long.toString(normalAt));
      }
      stats.put("tardis.peakBuffered", Integer.toString(peakBuffered));
      stats.put("tardis.backlog", backlog.toString());
    }
    return stats;
  }
}
