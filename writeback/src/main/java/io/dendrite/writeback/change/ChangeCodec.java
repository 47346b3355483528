package io.dendrite.writeback.change;

import io.dendrite.writeback.change.Change.FieldChange;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonSerializationException;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;

/**
 * The stable encoding of a {@link ChangeSequence}: one BSON document
 *
 * <pre>{@code
 * { "format": 1,
 *   "changes": [ { "op": "$set", "field": "a", "value": 1 },
 *                { "op": "$unset", "field": "b" },
 *                { "op": "$inc" | "$addToSet" | "$push" | "$pull", "field": ..., "value": ... },
 *                { "op": "insert", "fields": { ... } },
 *                { "op": "delete" } ] }
 * }</pre>
 *
 * Values use {@link FieldValues}' BSON mapping. BSON was chosen because it keeps the numeric types apart
 * (Integer, Long, Double, Decimal128), which {@code $inc} semantics depend on, and because the driver already
 * ships its codec. A later format bumps {@code format}; decoders keep reading every earlier one.
 */
final class ChangeCodec {
  private static final int FORMAT = 1;

  private ChangeCodec() {}

  static byte[] encode(ChangeSequence sequence) {
    BsonArray changes = new BsonArray();
    for (Change change : sequence.changes()) {
      changes.add(encode(change));
    }
    BsonDocument document = new BsonDocument("format", new BsonInt32(FORMAT)).append("changes", changes);
    ByteBuffer buffer = new RawBsonDocument(document, new BsonDocumentCodec()).getByteBuffer().asNIO();
    byte[] bytes = new byte[buffer.remaining()];
    buffer.get(bytes);
    return bytes;
  }

  private static BsonDocument encode(Change change) {
    if (change instanceof FieldChange fieldChange) {
      BsonDocument encoded = new BsonDocument("op", new BsonString(fieldChange.operator()))
          .append("field", new BsonString(fieldChange.field()));
      if (!(change instanceof Change.Unset)) {
        encoded.append("value", FieldValues.toBson(fieldChange.operand()));
      }
      return encoded;
    }
    if (change instanceof Change.Insert insert) {
      return new BsonDocument("op", new BsonString("insert")).append("fields", FieldValues.toBson(insert.fields()));
    }
    return new BsonDocument("op", new BsonString("delete"));
  }

  static ChangeSequence decode(byte[] encoded) {
    if (encoded == null) {
      throw new IllegalArgumentException("encoded change sequence must not be null");
    }
    try {
      BsonDocument document = new BsonDocumentCodec().decode(new BsonBinaryReader(ByteBuffer.wrap(encoded)),
          DecoderContext.builder().build());
      int format = document.getInt32("format").getValue();
      if (format != FORMAT) {
        throw new IllegalArgumentException("unknown change sequence format " + format);
      }
      List<Change> changes = new ArrayList<>();
      for (BsonValue change : document.getArray("changes")) {
        changes.add(decode(change.asDocument()));
      }
      return new ChangeSequence(changes);
    } catch (BsonSerializationException | BsonInvalidOperationException | IndexOutOfBoundsException e) {
      throw new IllegalArgumentException("not an encoded change sequence: " + e.getMessage(), e);
    }
  }

  private static Change decode(BsonDocument change) {
    String op = change.getString("op").getValue();
    switch (op) {
      case "insert":
        return new Change.Insert(asMap(FieldValues.fromBson(change.getDocument("fields"))));
      case "delete":
        return Change.delete();
      case "$unset":
        return Change.unset(field(change));
      default:
        BsonValue value = change.get("value");
        if (value == null) {
          throw new IllegalArgumentException("encoded " + op + " change lacks its value");
        }
        return fieldChange(op, field(change), FieldValues.fromBson(value));
    }
  }

  private static Change fieldChange(String op, String field, Object value) {
    switch (op) {
      case "$set":
        return Change.set(field, value);
      case "$inc":
        if (!(value instanceof Number amount)) {
          throw new IllegalArgumentException("$inc of '" + field + "' by non-number " + value);
        }
        return Change.inc(field, amount);
      case "$addToSet":
        return Change.addToSet(field, value);
      case "$push":
        return Change.push(field, value);
      case "$pull":
        return Change.pull(field, value);
      default:
        throw new IllegalArgumentException("unknown change operator " + op);
    }
  }

  private static String field(BsonDocument change) {
    return change.getString("field").getValue();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> asMap(Object document) {
    return (Map<String, Object>) document;
  }
}
