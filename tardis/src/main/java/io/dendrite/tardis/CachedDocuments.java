package io.dendrite.tardis;

import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.store.Entity;
import java.util.Map;
import java.util.Optional;

/**
 * How a document is cached: under {@code Doc:<collection>:<typed id>}, as the change sequence that makes it from
 * nothing (an insert of its fields, or a delete for a document known to be absent, so that misses on absent
 * documents are cached too). A write refreshes it with {@link ChangeSequence#applyTo}, the in-memory semantics the
 * data stores agree with.
 */
final class CachedDocuments {
  private static final String PREFIX = "Doc:";

  private CachedDocuments() {}

  static String keyOf(EntityKey key) {
    return BufferedWriteKey.of(PREFIX, key);
  }

  static byte[] encode(Optional<Map<String, Object>> fields) {
    return fields
        .map(present -> ChangeSequence.of(Change.insert(present)))
        .orElseGet(() -> ChangeSequence.of(Change.delete()))
        .encode();
  }

  static Optional<Map<String, Object>> decode(byte[] cached) {
    return ChangeSequence.decode(cached).applyTo(Optional.empty());
  }

  static Optional<Entity> entity(EntityKey key, Optional<Map<String, Object>> fields) {
    return fields.map(present -> new Entity(key, present));
  }
}
