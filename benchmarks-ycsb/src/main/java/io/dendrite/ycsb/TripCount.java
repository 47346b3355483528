package io.dendrite.ycsb;

/** The cache and database round trips of one operation, counted by the backend that makes them (one thread). */
final class TripCount {
  private int cache;
  private int cacheAwaited;
  private int database;

  void cache(int trips) {
    cache += trips;
  }

  /** Round trips awaited: requests sent together before waiting for a reply count once. */
  void cacheAwaited(int roundTrips) {
    cacheAwaited += roundTrips;
  }

  int cacheAwaited() {
    return cacheAwaited;
  }

  void database(int trips) {
    database += trips;
  }

  int cache() {
    return cache;
  }

  int database() {
    return database;
  }
}
