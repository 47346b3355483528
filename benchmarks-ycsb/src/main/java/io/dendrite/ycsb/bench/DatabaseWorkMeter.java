package io.dendrite.ycsb.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Follows the database server's own counters through one measured run, as {@link CpuMeter} follows the CPU:
 * it connects before the run, reads the counters at every YCSB status line, and at the end gives the work
 * done between the status lines the CPU was measured between, so that the two are per operation of the same
 * window. A server that cannot be read (gone, or without such counters) leaves the figures blank, with a
 * warning; it never fails the run.
 *
 * <p>Samples are taken on the thread that reads YCSB's stderr, the work on the runner's thread: the methods
 * are synchronized.
 */
final class DatabaseWorkMeter implements AutoCloseable {

  private final String run;
  private final Consumer<String> warn;
  private final boolean counted;
  private final List<Sample> samples = new ArrayList<>();

  /** Open from construction until closed or a read fails. */
  private StatusCounters.Session session;

  /** Why the figures are blank; the first reason only. */
  private String unreadable;

  private record Sample(YcsbOutputParser.Status status, StatusCounts counts) {}

  /**
   * Connects to the database's counters, if it has any (YCSB's {@code BasicDB} has none: its figures are
   * blank without a warning).
   *
   * @param run names the run in warnings
   * @param warn where to say why the figures are blank
   */
  DatabaseWorkMeter(String run, Database database, Consumer<String> warn) {
    this.run = run;
    this.warn = warn;
    this.counted = database.statusCounters().isPresent();
    database
        .statusCounters()
        .ifPresent(
            counters -> {
              try {
                session = counters.open();
              } catch (Exception e) {
                unreadable = "cannot connect to read them: " + why(e);
              }
            });
  }

  /** Reads the counters now, as YCSB has just printed {@code status}; after a failed read, reads no more. */
  synchronized void sample(YcsbOutputParser.Status status) {
    if (session == null) {
      return;
    }
    try {
      samples.add(new Sample(status, session.read()));
    } catch (Exception e) {
      // Any failure, as this runs on the thread that follows YCSB's output and must not end it.
      unreadable = "reading them at " + status.elapsedSeconds() + " s failed: " + why(e);
      close();
    }
  }

  /**
   * The work between the counters read at the window's first and last status line (the very lines, as
   * the CPU meter was handed them); empty, with a warning unless the database keeps no counters, when the
   * window is empty or a read failed.
   */
  synchronized Optional<DatabaseWork> work(Optional<CpuMeter.Window> window) {
    close();
    if (!counted) {
      return Optional.empty();
    }
    if (unreadable == null && window.isEmpty()) {
      unreadable = "YCSB printed fewer than two status lines to measure between";
    }
    Optional<Sample> first = window.flatMap(w -> at(w.first()));
    Optional<Sample> last = window.flatMap(w -> at(w.last()));
    if (unreadable == null && (first.isEmpty() || last.isEmpty())) {
      unreadable = "they were not read at the first and last status line of the CPU window";
    }
    if (unreadable != null) {
      warn.accept("database statements/commits/fsyncs n/a for " + run + ": " + unreadable);
      return Optional.empty();
    }
    return Optional.of(
        DatabaseWork.between(
            first.get().status(), first.get().counts(), last.get().status(), last.get().counts()));
  }

  private Optional<Sample> at(YcsbOutputParser.Status status) {
    return samples.stream().filter(s -> s.status() == status).findFirst();
  }

  private static String why(Exception e) {
    return e.getMessage() == null ? e.toString() : e.getMessage();
  }

  /** Closes the connection; the samples taken so far stay. */
  @Override
  public synchronized void close() {
    if (session != null) {
      session.close();
      session = null;
    }
  }
}
