package io.dendrite.ycsb.bench;

import java.util.OptionalDouble;

/**
 * The CPU the database server runs with in a run: the machine's cores, shared with the YCSB client and the cache
 * servers as they come ({@link #SHARED}), or a cgroup CPU quota of some cores ({@code dev/bench --db-cpus F}), which
 * makes the database the bottleneck as on a database server of its own while clients and cache servers share the
 * rest of the machine (the CPR paper's regime). A run's ratio to the database alone divides by the database alone in
 * the same regime.
 *
 * @param databaseCpus the quota in cores; empty when shared
 */
public record Regime(OptionalDouble databaseCpus) {

  public static final Regime SHARED = new Regime(OptionalDouble.empty());

  public Regime {
    if (databaseCpus.isPresent() && !(databaseCpus.getAsDouble() > 0)) {
      throw new IllegalArgumentException(
          "a database CPU quota must be positive: " + databaseCpus.getAsDouble());
    }
  }

  public static Regime capped(double cpus) {
    return new Regime(OptionalDouble.of(cpus));
  }

  public boolean capped() {
    return databaseCpus.isPresent();
  }

  /** The cores as the user typed them, without trailing zeros: {@code 0.25}, {@code 1}, {@code 1.5}; empty when shared. */
  public String cores() {
    return capped() ? DatabaseCpuCap.format(databaseCpus.getAsDouble()) : "";
  }

  /** How the report names it: {@code shared} or {@code db capped at 0.25 cores}. */
  public String label() {
    return capped()
        ? "db capped at " + cores() + (cores().equals("1") ? " core" : " cores")
        : "shared";
  }

  /** Appended to a run's name in progress lines, titles and headings: empty, or {@code , db capped at 0.25 cores}. */
  public String qualifier() {
    return capped() ? ", " + label() : "";
  }

  /** Appended to the names of a run's files, so the two regimes' runs keep theirs: empty or {@code .db-cpus-0.25}. */
  public String fileSuffix() {
    return capped() ? ".db-cpus-" + cores() : "";
  }
}
