package io.dendrite.ycsb;

import io.dendrite.core.ChangeRecords;
import io.dendrite.core.Interval;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.store.Entity;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The binding's writes kept as change records in Dendrite's cached result sets: a write's {@link EntityChanges} (the
 * same change the data store or the write-back buffer gets) is appended to each cached scan result it touches, and
 * readers apply it to the record it names, so no write decodes or re-encodes a cached result.
 */
final class RecordChangeRecords implements ChangeRecords<Long, YcsbRecord, EntityChanges> {
  private final RecordTable table;

  RecordChangeRecords(RecordTable table) {
    this.table = table;
  }

  @Override
  public Class<EntityChanges> changeType() {
    return EntityChanges.class;
  }

  /** The record's key, length-prefixed UTF-8, then its {@link ChangeSequence#encode() encoded} changes. */
  @Override
  public byte[] encode(EntityChanges change) {
    byte[] key = change.key().id().toString().getBytes(StandardCharsets.UTF_8);
    byte[] changes = change.changes().encode();
    return ByteBuffer.allocate(4 + key.length + changes.length)
        .putInt(key.length)
        .put(key)
        .put(changes)
        .array();
  }

  @Override
  public EntityChanges decode(byte[] record) {
    try {
      ByteBuffer in = ByteBuffer.wrap(record);
      int length = in.getInt();
      if (length < 0 || length > in.remaining()) {
        throw new IllegalArgumentException("key length " + length);
      }
      String key = new String(record, 4, length, StandardCharsets.UTF_8);
      return new EntityChanges(
          table.entityKey(key),
          ChangeSequence.decode(Arrays.copyOfRange(record, 4 + length, record.length)));
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "not a YCSB change record (" + record.length + " bytes)", e);
    }
  }

  /** Applies the changes to the record they name, as the data store would; the other rows stay as they are. */
  @Override
  public List<YcsbRecord> apply(
      Interval<Long> entryInterval, List<YcsbRecord> cachedRows, EntityChanges change) {
    String key = change.key().id().toString();
    List<YcsbRecord> after = new ArrayList<>(cachedRows.size() + 1);
    Optional<Map<String, Object>> before = Optional.empty();
    for (YcsbRecord row : cachedRows) {
      if (row.key().equals(key)) {
        Map<String, Object> fields = new LinkedHashMap<>(row.fields());
        fields.put(RecordTable.NUMBER, row.number());
        before = Optional.of(fields);
      } else {
        after.add(row);
      }
    }
    change
        .changes()
        .applyTo(before)
        .ifPresent(fields -> after.add(table.record(new Entity(change.key(), fields))));
    return after;
  }
}
