package io.dendrite.ycsb.bench;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * A database the benchmark loads and compares against, and how to empty it before a load (the
 * bindings create the table or collection again when it is missing).
 *
 * @param serverPidFile names the server process whose CPU the report counts as the database's; empty when
 *     there is none, as for YCSB's {@code BasicDB}, which runs inside the client
 * @param statusCounters where the server's own count of statements, commits and fsyncs is read; empty when
 *     it keeps none
 */
public record Database(
    String name,
    Reset reset,
    Optional<Path> serverPidFile,
    Optional<StatusCounters> statusCounters) {

  /** Drops what a previous load left behind. */
  @FunctionalInterface
  public interface Reset {
    void run() throws Exception;
  }

  public Database {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(reset, "reset");
    Objects.requireNonNull(serverPidFile, "serverPidFile");
    Objects.requireNonNull(statusCounters, "statusCounters");
  }

  /** A database with nothing to drop and no server process, such as YCSB's {@code BasicDB}. */
  public static Database withoutReset(String name) {
    return new Database(name, () -> {}, Optional.empty(), Optional.empty());
  }
}
