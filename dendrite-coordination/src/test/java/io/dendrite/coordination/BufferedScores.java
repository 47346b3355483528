package io.dendrite.coordination;

import io.dendrite.core.CacheUpdate;
import io.dendrite.core.WriteCommand;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link Scores}' writes under write-back, as the buffered changes the write-back engine takes: {@link #set} sets a
 * row's {@code val}, {@link #inc} adds one to its {@code cnt} (not idempotent: applied twice, it shows). Rows are
 * never deleted here, so a set always finds its row.
 */
final class BufferedScores {
  private BufferedScores() {}

  static EntityChanges set(int id, long val) {
    return new EntityChanges(key(id), ChangeSequence.of(Change.set("val", val)));
  }

  static EntityChanges inc(int id) {
    return new EntityChanges(key(id), ChangeSequence.of(Change.inc("cnt", 1L)));
  }

  /** A score's range attribute, its id: a function of its document's key, as a range-owned engine needs. */
  static Integer id(EntityKey key) {
    return ((Number) key.id()).intValue();
  }

  private static EntityKey key(int id) {
    return new EntityKey("scores", (long) id);
  }

  /** Sets and increments alike, told apart by their one change. */
  static WriteCommand<Integer, Scores.Score, EntityChanges> changes() {
    return new WriteCommand<>() {
      @Override
      public Class<EntityChanges> type() {
        return EntityChanges.class;
      }

      @Override
      public byte[] encode(EntityChanges changes) {
        Change change = changes.changes().changes().get(0);
        long id = ((Number) changes.key().id()).longValue();
        long val = change instanceof Change.Set set ? ((Number) set.value()).longValue() : -1;
        return ByteBuffer.allocate(16).putLong(id).putLong(val).array();
      }

      @Override
      public EntityChanges decode(byte[] bytes) {
        if (bytes.length != 16) {
          throw new IllegalArgumentException(
              "a buffered score change is 16 bytes, got " + bytes.length);
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        int id = (int) buffer.getLong();
        long val = buffer.getLong();
        return val < 0 ? inc(id) : set(id, val);
      }

      @Override
      public void apply(EntityChanges changes) {
        throw new UnsupportedOperationException(
            "write-back buffers the changes; nothing applies them here");
      }

      @Override
      public CacheUpdate<Integer, Scores.Score> cacheUpdate(EntityChanges changes) {
        int id = (int) ((Number) changes.key().id()).longValue();
        Change change = changes.changes().changes().get(0);
        if (change instanceof Change.Set set) {
          return Scores.setting(id, ((Number) set.value()).longValue());
        }
        return (interval, cached) -> {
          List<Scores.Score> after = new ArrayList<>();
          for (Scores.Score row : cached) {
            after.add(row.id() == id ? new Scores.Score(id, row.val(), row.cnt() + 1) : row);
          }
          return after;
        };
      }
    };
  }
}
