package io.dendrite.writeback.change;

import java.nio.charset.StandardCharsets;
import org.bson.types.ObjectId;

/**
 * Names one document or row: the MongoDB collection (or SQL table) that holds it and its {@code _id} (or
 * single-column primary key value).
 *
 * @param collection the collection or table name
 * @param id the document id or primary key value: an Integer, Long, String or ObjectId
 */
public record EntityKey(String collection, Object id) {

  /** memcached's key limit, which every cache key named after a document must respect. */
  private static final int MAX_CACHE_KEY_BYTES = 250;

  /**
   * The longest prefix of a cache key named after a document: a session mapping over a buffered write's key ({@code
   * SessionMap:BW:<collection>:<typed id>}); locks on stock memcached ({@code Lock:TW:}) and TARDIS's cached
   * documents ({@code Doc:}) are shorter. A value moved aside ({@code Undecodable:}) is named by a hash when its key
   * is too long.
   */
  private static final int LONGEST_PREFIX = "SessionMap:BW:".length();

  /**
   * @throws IllegalArgumentException when the collection is blank or holds whitespace or control characters, the id
   *     is null or of an unsupported type, or the two together are too long for the cache keys named after the
   *     document (memcached's 250 bytes): refused here, before any write could queue a key the cache refuses
   */
  public EntityKey {
    if (collection == null || collection.isBlank()) {
      throw new IllegalArgumentException("collection must be a non-blank name, got " + collection);
    }
    if (collection.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
      throw new IllegalArgumentException(
          "collection \""
              + collection
              + "\" holds whitespace or control characters, which no cache key may hold");
    }
    if (!(id instanceof Integer
        || id instanceof Long
        || id instanceof String
        || id instanceof ObjectId)) {
      throw new IllegalArgumentException(
          "id must be a non-null Integer, Long, String or ObjectId, got "
              + (id == null ? "null" : id.getClass().getName()));
    }
    long keyBytes =
        LONGEST_PREFIX
            + collection.getBytes(StandardCharsets.UTF_8).length
            + ":".length()
            + typedIdLength(id);
    if (keyBytes > MAX_CACHE_KEY_BYTES) {
      String shown = id.toString();
      throw new IllegalArgumentException(
          "document "
              + collection
              + "/"
              + (shown.length() > 40 ? shown.substring(0, 40) + "..." : shown)
              + " is too long for the cache: its keys would be up to "
              + keyBytes
              + " bytes, over memcached's "
              + MAX_CACHE_KEY_BYTES
              + " (the collection name and the id, base64url-encoded for a String, must together stay under "
              + (MAX_CACHE_KEY_BYTES - LONGEST_PREFIX)
              + " bytes)");
    }
  }

  /** The length of the id as buffered-write keys write it: a type letter, then the id (a String base64url-encoded). */
  private static long typedIdLength(Object id) {
    if (id instanceof String text) {
      long bytes = text.getBytes(StandardCharsets.UTF_8).length;
      return 1 + (bytes * 4 + 2) / 3;
    }
    return 1 + (id instanceof ObjectId ? 24 : id.toString().length());
  }
}
