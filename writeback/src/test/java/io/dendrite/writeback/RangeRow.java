package io.dendrite.writeback;

import io.dendrite.core.CacheUpdate;
import io.dendrite.core.RowCodec;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A row of the range tests' table {@code t}: key {@code id} (a Long), range attribute {@code pos} (always equal to
 * the id, so every row lies at its own point), payload {@code val}; with the changes and cache updates writes use.
 */
record RangeRow(long id, long val) {
  static final String TABLE = "t";
  static final String RANGE_ATTRIBUTE = "pos";

  static final RowCodec<Long, RangeRow> CODEC = new RowCodec<>() {
    @Override
    public Long attributeOf(RangeRow row) {
      return row.id();
    }

    @Override
    public Object identityOf(RangeRow row) {
      return row.id();
    }

    @Override
    public byte[] encode(RangeRow row) {
      return ByteBuffer.allocate(16).putLong(row.id()).putLong(row.val()).array();
    }

    @Override
    public RangeRow decode(byte[] bytes) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      return new RangeRow(buffer.getLong(), buffer.getLong());
    }
  };

  static EntityKey key(long id) {
    return new EntityKey(TABLE, id);
  }

  /** The row as a whole-row insert (an upsert). */
  EntityChanges insert() {
    return new EntityChanges(key(id), ChangeSequence.of(Change.insert(Map.of(RANGE_ATTRIBUTE, id, "val", val))));
  }

  /** An update of the existing row's value field. */
  EntityChanges update() {
    return new EntityChanges(key(id), ChangeSequence.of(Change.set("val", val)));
  }

  static EntityChanges delete(long id) {
    return new EntityChanges(key(id), ChangeSequence.of(Change.delete()));
  }

  /** The cache update of an insert or update: the row replaces its old version, if in the entry. */
  CacheUpdate<Long, RangeRow> putting() {
    return (interval, cached) -> {
      List<RangeRow> after = new ArrayList<>(cached);
      after.removeIf(old -> old.id() == id);
      after.add(this);
      return after;
    };
  }

  static CacheUpdate<Long, RangeRow> removing(long id) {
    return (interval, cached) -> cached.stream().filter(row -> row.id() != id).toList();
  }

  /** The rows of the data store in [lowerBound, upperBound]: the query behind every get. */
  static List<RangeRow> readRange(DataStore store, long lowerBound, long upperBound) {
    return store.readRange(TABLE, RANGE_ATTRIBUTE, lowerBound, upperBound).stream().map(RangeRow::of).toList();
  }

  static RangeRow of(Entity entity) {
    return new RangeRow(((Number) entity.key().id()).longValue(), ((Number) entity.fields().get("val")).longValue());
  }
}
