package io.dendrite.writeback.store;

import io.dendrite.writeback.change.EntityKey;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A document or row as a data store holds it.
 *
 * @param key its collection (table) and id (primary key value)
 * @param fields its fields (columns), the key field excluded; unmodifiable
 */
public record Entity(EntityKey key, Map<String, Object> fields) {

  /** @throws IllegalArgumentException when the key or the fields are null */
  public Entity {
    if (key == null || fields == null) {
      throw new IllegalArgumentException("key and fields must not be null");
    }
    fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
  }
}
