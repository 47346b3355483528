package io.dendrite.writeback.internal;

import io.dendrite.writeback.change.EntityKey;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.bson.types.ObjectId;

/**
 * Names the cache key of a document's buffered write, {@code BW:<collection>:<id>}, and reads the document back
 * from it, so that a {@link PendingWritesPartition} line is all a drain thread needs. The id carries its type in
 * one letter ({@code i} Integer, {@code l} Long, {@code o} ObjectId, {@code s} String); String ids are base64url
 * encoded because memcached keys may not contain spaces or control characters.
 */
public final class BufferedWriteKey {
  private static final String PREFIX = "BW:";

  private BufferedWriteKey() {}

  public static String of(EntityKey key) {
    Object id = key.id();
    String typedId;
    if (id instanceof Integer) {
      typedId = "i" + id;
    } else if (id instanceof Long) {
      typedId = "l" + id;
    } else if (id instanceof ObjectId objectId) {
      typedId = "o" + objectId.toHexString();
    } else {
      typedId =
          "s"
              + Base64.getUrlEncoder()
                  .withoutPadding()
                  .encodeToString(((String) id).getBytes(StandardCharsets.UTF_8));
    }
    return PREFIX + key.collection() + ":" + typedId;
  }

  /** @throws IllegalArgumentException when {@code cacheKey} was not made by {@link #of} */
  public static EntityKey parse(String cacheKey) {
    int idStart = cacheKey.lastIndexOf(':') + 1;
    if (!cacheKey.startsWith(PREFIX)
        || idStart <= PREFIX.length() + 1
        || idStart >= cacheKey.length()) {
      throw new IllegalArgumentException("not a buffered-write key: " + cacheKey);
    }
    String collection = cacheKey.substring(PREFIX.length(), idStart - 1);
    String text = cacheKey.substring(idStart + 1);
    Object id =
        switch (cacheKey.charAt(idStart)) {
          case 'i' -> Integer.valueOf(text);
          case 'l' -> Long.valueOf(text);
          case 'o' -> new ObjectId(text);
          case 's' -> new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8);
          default -> throw new IllegalArgumentException("not a buffered-write key: " + cacheKey);
        };
    return new EntityKey(collection, id);
  }
}
