package io.dendrite.ycsb.bench;

import java.util.Map;
import java.util.Objects;

/**
 * One system under test: a YCSB binding class over a database with its properties, the cache it
 * needs started for each run, and whether it is the database alone that the others are compared with.
 *
 * @param policy the series it belongs to in the plots ({@code write-back}, {@code look-aside}, ...);
 *     {@code alone} for the database alone
 */
public record Configuration(
    String name,
    Database database,
    String policy,
    String bindingClass,
    Map<String, String> properties,
    Cache cache) {

  /** The servers a run of this configuration needs started, fresh, before it. */
  public enum Cache {
    NONE,
    IQ_SERVERS,
    MEMCACHED
  }

  public static final String ALONE = "alone";

  public Configuration {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(database, "database");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(bindingClass, "bindingClass");
    Objects.requireNonNull(cache, "cache");
    properties = Map.copyOf(properties);
    if (!name.matches("[A-Za-z0-9._-]+")) {
      throw new IllegalArgumentException(
          "configuration name must be letters, digits, '.', '_' or '-' (it names files): " + name);
    }
  }

  public boolean databaseAlone() {
    return policy.equals(ALONE);
  }

  /** Whether its runs poll the cache servers' pinned memory (buffered writes and their log records). */
  public boolean writeBack() {
    return policy.equals("write-back");
  }
}
