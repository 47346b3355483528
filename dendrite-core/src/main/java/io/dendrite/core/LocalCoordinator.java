package io.dendrite.core;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The single-process coordinator: this process owns every range. It refuses a second live claim on the
 * same range, because two Dendrites with separate interval trees for one range would not see each
 * other's cached entries and could leave stale ones behind.
 */
public final class LocalCoordinator implements Coordinator {
  private final Set<String> claimed = ConcurrentHashMap.newKeySet();

  @Override
  public RangeClaim claim(String collection, String domain) {
    String range = collection + "/" + domain;
    if (!claimed.add(range)) {
      throw new IllegalStateException(
          "range " + range + " is already owned by another open Dendrite; close it first");
    }
    return () -> claimed.remove(range);
  }
}
