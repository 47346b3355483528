package io.dendrite.tardis;

import io.dendrite.core.CacheUpdate;
import io.dendrite.core.RowCodec;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.store.Entity;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A row of the range tests' tables: its id is also its range attribute {@code pos}; {@code name} is its value. */
record NamedRow(long id, String name) {
  static final RowCodec<Long, NamedRow> CODEC =
      new RowCodec<>() {
        @Override
        public Long attributeOf(NamedRow row) {
          return row.id();
        }

        @Override
        public Object identityOf(NamedRow row) {
          return row.id();
        }

        @Override
        public byte[] encode(NamedRow row) {
          byte[] name = row.name().getBytes(StandardCharsets.UTF_8);
          return ByteBuffer.allocate(8 + name.length).putLong(row.id()).put(name).array();
        }

        @Override
        public NamedRow decode(byte[] bytes) {
          ByteBuffer buffer = ByteBuffer.wrap(bytes);
          long id = buffer.getLong();
          return new NamedRow(id, new String(bytes, 8, bytes.length - 8, StandardCharsets.UTF_8));
        }
      };

  static NamedRow of(Entity entity) {
    return new NamedRow(
        ((Number) entity.key().id()).longValue(), (String) entity.fields().get("name"));
  }

  /** The cache update of a write of names: each written row replaces its old version. */
  static CacheUpdate<Long, NamedRow> updateOf(DocumentChanges changes) {
    Map<Long, String> written = new HashMap<>();
    for (EntityChanges one : changes.each()) {
      for (Change change : one.changes().changes()) {
        written.put(((Number) one.key().id()).longValue(), (String) ((Change.Set) change).value());
      }
    }
    return (interval, cached) -> {
      List<NamedRow> after = new ArrayList<>(cached);
      after.removeIf(row -> written.containsKey(row.id()));
      written.forEach((id, name) -> after.add(new NamedRow(id, name)));
      return after;
    };
  }
}
