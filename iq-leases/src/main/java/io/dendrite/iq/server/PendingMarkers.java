package io.dendrite.iq.server;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.util.concurrent.atomic.LongAdder;

/**
 * The keys whose value a {@code commit <tid> 1} deleted while the data store's write is still pending: the next
 * I-lease grant on such a key says so (the {@code P} flag), and the fill clears it. Nothing else ever removes a
 * marker, so a client that commits pending deletes of many keys nobody reads again would grow the table without
 * end: it is bounded by weight (key bytes plus overhead) and drops its least recently used markers past that. A
 * dropped marker makes the next grant on that key say "not pending", as after a restart of the server.
 */
final class PendingMarkers {
  /** What the markers may take: about 200,000 markers of 16-byte keys. */
  static final long MAX_BYTES = 16L << 20;

  private static final int OVERHEAD_BYTES = 64;

  private final Cache<String, Boolean> markers;
  private final LongAdder dropped = new LongAdder();

  PendingMarkers() {
    this(MAX_BYTES);
  }

  PendingMarkers(long maxBytes) {
    this.markers =
        Caffeine.newBuilder()
            .maximumWeight(maxBytes)
            .weigher((String key, Boolean marker) -> key.length() + OVERHEAD_BYTES)
            .executor(Runnable::run)
            .evictionListener(
                (String key, Boolean marker, RemovalCause cause) -> {
                  if (cause == RemovalCause.SIZE) {
                    dropped.increment();
                  }
                })
            .build();
  }

  void add(String key) {
    markers.put(key, Boolean.TRUE);
  }

  boolean contains(String key) {
    return markers.getIfPresent(key) != null;
  }

  /** Removes the marker; whether there was one. */
  boolean remove(String key) {
    return markers.asMap().remove(key) != null;
  }

  long size() {
    return markers.estimatedSize();
  }

  /** Markers dropped because the table was full. */
  long dropped() {
    return dropped.sum();
  }
}
