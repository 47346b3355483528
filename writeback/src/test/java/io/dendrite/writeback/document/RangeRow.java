package io.dendrite.writeback.document;

import io.dendrite.core.CacheUpdate;
import io.dendrite.core.ChangeRecords;
import io.dendrite.core.Interval;
import io.dendrite.core.RowCodec;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A row of the range tests' table {@code t}: key {@code id} (a Long), range attribute {@code pos} (always equal to
 * the id, so every row lies at its own point), payload {@code val}; with the changes and cache updates writes use.
 */
record RangeRow(long id, long val) {
  static final String TABLE = "t";
  static final String RANGE_ATTRIBUTE = "pos";

  static final RowCodec<Long, RangeRow> CODEC =
      new RowCodec<>() {
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
    return new EntityChanges(
        key(id), ChangeSequence.of(Change.insert(Map.of(RANGE_ATTRIBUTE, id, "val", val))));
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

  /**
   * The cache update of any write of rows of this table: each document's insert, update of {@code val} or delete,
   * in order (what {@link #putting} and {@link #removing} do for one row).
   */
  static CacheUpdate<Long, RangeRow> cacheUpdateOf(DocumentChanges changes) {
    List<CacheUpdate<Long, RangeRow>> each = new ArrayList<>();
    for (EntityChanges one : changes.each()) {
      long id = ((Number) one.key().id()).longValue();
      for (Change change : one.changes().changes()) {
        if (change instanceof Change.Delete) {
          each.add(removing(id));
        } else if (change instanceof Change.Insert insert) {
          each.add(new RangeRow(id, ((Number) insert.fields().get("val")).longValue()).putting());
        } else if (change instanceof Change.Set set && set.field().equals("val")) {
          each.add(new RangeRow(id, ((Number) set.value()).longValue()).putting());
        } else {
          throw new IllegalArgumentException("not a change of a RangeRow: " + change);
        }
      }
    }
    return (interval, cached) -> {
      List<RangeRow> rows = cached;
      for (CacheUpdate<Long, RangeRow> update : each) {
        rows = update.apply(interval, rows);
      }
      return rows;
    };
  }

  static CacheUpdate<Long, RangeRow> removing(long id) {
    return (interval, cached) -> cached.stream().filter(row -> row.id() != id).toList();
  }

  /** Writes to one row kept as change records in the cached entries: its id, then its encoded changes. */
  static final ChangeRecords<Long, RangeRow, EntityChanges> CHANGE_RECORDS =
      new ChangeRecords<>() {
        @Override
        public Class<EntityChanges> changeType() {
          return EntityChanges.class;
        }

        @Override
        public byte[] encode(EntityChanges change) {
          byte[] changes = change.changes().encode();
          return ByteBuffer.allocate(8 + changes.length)
              .putLong(((Number) change.key().id()).longValue())
              .put(changes)
              .array();
        }

        @Override
        public EntityChanges decode(byte[] record) {
          return new EntityChanges(
              key(ByteBuffer.wrap(record).getLong()),
              ChangeSequence.decode(Arrays.copyOfRange(record, 8, record.length)));
        }

        @Override
        public List<RangeRow> apply(
            Interval<Long> entryInterval, List<RangeRow> cachedRows, EntityChanges change) {
          long id = ((Number) change.key().id()).longValue();
          List<RangeRow> after = new ArrayList<>(cachedRows);
          Optional<Map<String, Object>> before =
              after.stream()
                  .filter(row -> row.id() == id)
                  .findFirst()
                  .map(row -> Map.of(RANGE_ATTRIBUTE, row.id(), "val", row.val()));
          after.removeIf(row -> row.id() == id);
          change
              .changes()
              .applyTo(before)
              .ifPresent(fields -> after.add(of(new Entity(change.key(), fields))));
          return after;
        }
      };

  /** The rows of the data store in [lowerBound, upperBound]: the query behind every get. */
  static List<RangeRow> readRange(DataStore store, long lowerBound, long upperBound) {
    return store.readRange(TABLE, RANGE_ATTRIBUTE, lowerBound, upperBound).stream()
        .map(RangeRow::of)
        .toList();
  }

  static RangeRow of(Entity entity) {
    return new RangeRow(
        ((Number) entity.key().id()).longValue(),
        ((Number) entity.fields().get("val")).longValue());
  }
}
