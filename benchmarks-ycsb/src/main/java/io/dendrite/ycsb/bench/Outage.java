package io.dendrite.ycsb.bench;

/**
 * A database outage in every measured run: the database is cut {@code atSeconds} after the run's workload starts
 * (YCSB's first status line) and restored {@code forSeconds} later.
 */
public record Outage(int atSeconds, int forSeconds) {

  public Outage {
    if (atSeconds < 1 || forSeconds < 1) {
      throw new IllegalArgumentException(
          "an outage needs at least 1 s before it and 1 s of outage, got at "
              + atSeconds
              + " s for "
              + forSeconds
              + " s");
    }
  }

  /** Seconds into the run when the database is back. */
  public int endSeconds() {
    return atSeconds + forSeconds;
  }
}
