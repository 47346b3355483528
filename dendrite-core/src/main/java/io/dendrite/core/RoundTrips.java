package io.dendrite.core;

/** Counts the cache round trips of one operation (one thread). */
final class RoundTrips {
  private int count;

  void add(int trips) {
    count += trips;
  }

  int count() {
    return count;
  }
}
