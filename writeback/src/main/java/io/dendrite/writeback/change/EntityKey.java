package io.dendrite.writeback.change;

import org.bson.types.ObjectId;

/**
 * Names one document or row: the MongoDB collection (or SQL table) that holds it and its {@code _id} (or
 * single-column primary key value).
 *
 * @param collection the collection or table name
 * @param id the document id or primary key value: an Integer, Long, String or ObjectId
 */
public record EntityKey(String collection, Object id) {

  /** @throws IllegalArgumentException when the collection is blank or the id is null or of an unsupported type */
  public EntityKey {
    if (collection == null || collection.isBlank()) {
      throw new IllegalArgumentException("collection must be a non-blank name, got " + collection);
    }
    if (!(id instanceof Integer
        || id instanceof Long
        || id instanceof String
        || id instanceof ObjectId)) {
      throw new IllegalArgumentException(
          "id must be a non-null Integer, Long, String or ObjectId, got "
              + (id == null ? "null" : id.getClass().getName()));
    }
  }
}
