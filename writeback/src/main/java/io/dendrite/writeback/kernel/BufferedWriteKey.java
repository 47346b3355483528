package io.dendrite.writeback.kernel;

import io.dendrite.writeback.change.EntityKey;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.bson.types.ObjectId;

/**
 * Names the cache key of a document's buffered write, {@code BW:<collection>:<id>}, and reads the document back
 * from it, so that a {@link PendingWritesPartition} line is all a drain thread needs. The id carries its type in
 * one letter ({@code i} Integer, {@code l} Long, {@code o} ObjectId, {@code s} String); String ids are base64url
 * encoded because memcached keys may not contain spaces or control characters.
 *
 * <p>TARDIS buffers the writes the data store failed to take the same way, under {@link #TELEPORTED} ({@code
 * TW:}) keys: a document buffered by both would have two holders, and a write-back drain would overwrite what
 * TARDIS wrote to the data store directly.
 */
public final class BufferedWriteKey {
  /** The prefix of write-back's buffered writes. */
  public static final String WRITE_BACK = "BW:";

  /** The prefix of TARDIS's teleported writes (the thesis' Δᵢ). */
  public static final String TELEPORTED = "TW:";

  private BufferedWriteKey() {}

  /** Write-back's key for the document's buffered write. */
  public static String of(EntityKey key) {
    return of(WRITE_BACK, key);
  }

  /** The key for the document's buffered write under {@code prefix}, {@link #WRITE_BACK} or {@link #TELEPORTED}. */
  public static String of(String prefix, EntityKey key) {
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
    return prefix + key.collection() + ":" + typedId;
  }

  /** @throws IllegalArgumentException when {@code cacheKey} was not made by {@link #of}, under either prefix */
  public static EntityKey parse(String cacheKey) {
    int idStart = cacheKey.lastIndexOf(':') + 1;
    String prefix = cacheKey.startsWith(TELEPORTED) ? TELEPORTED : WRITE_BACK;
    if (!cacheKey.startsWith(prefix)
        || idStart <= prefix.length() + 1
        || idStart >= cacheKey.length()) {
      throw new IllegalArgumentException("not a buffered-write key: " + cacheKey);
    }
    String collection = cacheKey.substring(prefix.length(), idStart - 1);
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
