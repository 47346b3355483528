package io.dendrite.writeback.change;

import io.dendrite.writeback.change.Change.FieldChange;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BSONException;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonType;
import org.bson.io.BasicOutputBuffer;

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
 *
 * <p>Both directions stream through the driver's binary writer and reader instead of building a document tree
 * first: every buffered write is encoded by its writer and decoded by a drain, and the tree cost as much again as
 * the bytes (measured in {@code docs/history/benchmarks-2026-11.md}, "Change codec"). Fields of a document are read
 * in any order; unknown fields are skipped, as the tree decoder did.
 */
final class ChangeCodec {
  private static final int FORMAT = 1;

  private ChangeCodec() {}

  static byte[] encode(ChangeSequence sequence) {
    BasicOutputBuffer buffer = new BasicOutputBuffer(64 + 48 * sequence.changes().size());
    try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
      writer.writeStartDocument();
      writer.writeInt32("format", FORMAT);
      writer.writeStartArray("changes");
      for (Change change : sequence.changes()) {
        encode(writer, change);
      }
      writer.writeEndArray();
      writer.writeEndDocument();
    }
    return buffer.toByteArray();
  }

  private static void encode(BsonBinaryWriter writer, Change change) {
    writer.writeStartDocument();
    if (change instanceof FieldChange fieldChange) {
      writer.writeString("op", fieldChange.operator());
      writer.writeString("field", fieldChange.field());
      if (!(change instanceof Change.Unset)) {
        writer.writeName("value");
        FieldValues.write(writer, fieldChange.operand());
      }
    } else if (change instanceof Change.Insert insert) {
      writer.writeString("op", "insert");
      writer.writeName("fields");
      FieldValues.write(writer, insert.fields());
    } else {
      writer.writeString("op", "delete");
    }
    writer.writeEndDocument();
  }

  static ChangeSequence decode(byte[] encoded) {
    if (encoded == null) {
      throw new IllegalArgumentException("encoded change sequence must not be null");
    }
    try (BsonBinaryReader reader = new BsonBinaryReader(ByteBuffer.wrap(encoded))) {
      Integer format = null;
      List<Change> changes = null;
      reader.readStartDocument();
      while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
        switch (reader.readName()) {
          case "format" -> {
            expect(reader, BsonType.INT32, "format");
            format = reader.readInt32();
            if (format != FORMAT) {
              throw new IllegalArgumentException("unknown change sequence format " + format);
            }
          }
          case "changes" -> {
            expect(reader, BsonType.ARRAY, "changes");
            changes = new ArrayList<>();
            reader.readStartArray();
            while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
              expect(reader, BsonType.DOCUMENT, "a change");
              changes.add(decodeChange(reader));
            }
            reader.readEndArray();
          }
          default -> reader.skipValue();
        }
      }
      reader.readEndDocument();
      if (format == null || changes == null) {
        throw new IllegalArgumentException(
            "encoded change sequence lacks its " + (format == null ? "format" : "changes"));
      }
      if (reader.getBsonInput().getPosition() != encoded.length) {
        throw new IllegalArgumentException(
            (encoded.length - reader.getBsonInput().getPosition())
                + " bytes follow the encoded change sequence");
      }
      return new ChangeSequence(changes);
    } catch (BSONException | IndexOutOfBoundsException | BufferUnderflowException e) {
      throw new IllegalArgumentException("not an encoded change sequence: " + e.getMessage(), e);
    }
  }

  private static Change decodeChange(BsonBinaryReader reader) {
    String op = null;
    String field = null;
    Object value = null;
    boolean hasValue = false;
    Object fields = null;
    reader.readStartDocument();
    while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
      switch (reader.readName()) {
        case "op" -> {
          expect(reader, BsonType.STRING, "op");
          op = reader.readString();
        }
        case "field" -> {
          expect(reader, BsonType.STRING, "field");
          field = reader.readString();
        }
        case "value" -> {
          value = FieldValues.read(reader);
          hasValue = true;
        }
        case "fields" -> {
          expect(reader, BsonType.DOCUMENT, "fields");
          fields = FieldValues.read(reader);
        }
        default -> reader.skipValue();
      }
    }
    reader.readEndDocument();
    if (op == null) {
      throw new IllegalArgumentException("encoded change lacks its op");
    }
    switch (op) {
      case "insert":
        if (fields == null) {
          throw new IllegalArgumentException("encoded insert lacks its fields");
        }
        return new Change.Insert(asMap(fields));
      case "delete":
        return Change.delete();
      case "$unset":
        return Change.unset(required(field, op));
      default:
        if (!hasValue) {
          throw new IllegalArgumentException("encoded " + op + " change lacks its value");
        }
        return fieldChange(op, required(field, op), value);
    }
  }

  private static void expect(BsonBinaryReader reader, BsonType type, String what) {
    if (reader.getCurrentBsonType() != type) {
      throw new IllegalArgumentException(
          "encoded " + what + " is " + reader.getCurrentBsonType() + ", not " + type);
    }
  }

  private static String required(String field, String op) {
    if (field == null) {
      throw new IllegalArgumentException("encoded " + op + " change lacks its field");
    }
    return field;
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

  @SuppressWarnings("unchecked")
  private static Map<String, Object> asMap(Object document) {
    return (Map<String, Object>) document;
  }
}
