package io.dendrite.ycsb;

/** The cache and database round trips of one operation, counted by the backend that makes them (one thread). */
final class TripCount {
  private int cache;
  private int database;

  void cache(int trips) {
    cache += trips;
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
