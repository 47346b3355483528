package io.dendrite.writeback.change;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.BsonDocumentWriter;
import org.bson.BsonReader;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.BsonWriter;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

/**
 * The values a field may hold in a change, and their one mapping to and from BSON, shared by the change encoding
 * and the MongoDB adapter so that a value survives both unchanged.
 *
 * <p>Supported: {@code null}, Boolean, Integer, Long, Double, BigDecimal (within Decimal128's 34 digits), String,
 * Instant (whole milliseconds, as BSON dates are), ObjectId, and Lists and String-keyed Maps of those. Checked
 * values are returned as unmodifiable copies, which is what lets changes be immutable values. Other types (Float,
 * Short, byte[] ...) are refused rather than silently widened, so that what is read back equals what was written.
 */
public final class FieldValues {
  /** The one field of the document {@link #toBson} and {@link #fromBson} wrap a lone value in. */
  private static final String HOLDER_FIELD = "v";

  private FieldValues() {}

  /**
   * Checks a value and returns an unmodifiable copy of it.
   *
   * @throws IllegalArgumentException when the value or a nested value has an unsupported type
   */
  public static Object check(Object value) {
    if (value == null
        || value instanceof Boolean
        || value instanceof Integer
        || value instanceof Long
        || value instanceof Double
        || value instanceof String
        || value instanceof ObjectId) {
      return value;
    }
    if (value instanceof BigDecimal decimal) {
      try {
        new Decimal128(decimal);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("BigDecimal " + decimal + " does not fit Decimal128", e);
      }
      return decimal;
    }
    if (value instanceof Instant instant) {
      if (instant.getNano() % 1_000_000 != 0) {
        throw new IllegalArgumentException(
            "Instant "
                + instant
                + " has sub-millisecond precision; BSON dates"
                + " keep milliseconds: truncate it first");
      }
      return instant;
    }
    if (value instanceof List<?> list) {
      List<Object> copy = new ArrayList<>(list.size());
      list.forEach(element -> copy.add(check(element)));
      return Collections.unmodifiableList(copy);
    }
    if (value instanceof Map<?, ?> map) {
      return checkDocument(map);
    }
    throw new IllegalArgumentException(
        "unsupported field value type "
            + value.getClass().getName()
            + "; supported: null, Boolean, Integer, Long, Double, BigDecimal, String, Instant, ObjectId, List, Map");
  }

  /**
   * Checks a document (field name to value) and returns an unmodifiable, order-keeping copy of it.
   *
   * @throws IllegalArgumentException when a field name or value is not supported
   */
  public static Map<String, Object> checkDocument(Map<?, ?> document) {
    if (document == null) {
      throw new IllegalArgumentException("document must not be null");
    }
    Map<String, Object> copy = new LinkedHashMap<>();
    document.forEach(
        (name, value) -> {
          if (!(name instanceof String field)) {
            throw new IllegalArgumentException("field names must be Strings, got " + name);
          }
          copy.put(checkFieldName(field), check(value));
        });
    return Collections.unmodifiableMap(copy);
  }

  /**
   * Checks a top-level field name. Dotted paths are refused: compaction reasons about fields as independent,
   * which {@code a} and {@code a.b} are not.
   *
   * @throws IllegalArgumentException when the name is empty, starts with {@code $} or contains {@code .} or NUL
   */
  public static String checkFieldName(String field) {
    if (field == null
        || field.isEmpty()
        || field.startsWith("$")
        || field.indexOf('.') >= 0
        || field.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(
          "field name must be non-empty, not start with '$' and contain no '.'"
              + " or NUL, got "
              + (field == null ? "null" : "'" + field + "'"));
    }
    return field;
  }

  /** Maps a checked value to BSON through {@link #write}: the change encoding and the MongoDB adapter share it. */
  public static BsonValue toBson(Object value) {
    BsonDocument holder = new BsonDocument();
    try (BsonDocumentWriter writer = new BsonDocumentWriter(holder)) {
      writer.writeStartDocument();
      writer.writeName(HOLDER_FIELD);
      write(writer, value);
      writer.writeEndDocument();
    }
    return holder.get(HOLDER_FIELD);
  }

  /**
   * Maps BSON back to a value; documents become unmodifiable Maps, arrays unmodifiable Lists.
   *
   * @throws IllegalArgumentException for BSON types outside the supported values (binary, regex, timestamp ...)
   */
  public static Object fromBson(BsonValue value) {
    try (BsonDocumentReader reader =
        new BsonDocumentReader(new BsonDocument(HOLDER_FIELD, value))) {
      reader.readStartDocument();
      reader.readBsonType();
      reader.readName();
      return read(reader);
    }
  }

  /** Writes a checked value to {@code writer}: the mapping to BSON, streamed (the change codec) or into a tree. */
  static void write(BsonWriter writer, Object value) {
    if (value == null) {
      writer.writeNull();
    } else if (value instanceof Boolean b) {
      writer.writeBoolean(b);
    } else if (value instanceof Integer i) {
      writer.writeInt32(i);
    } else if (value instanceof Long l) {
      writer.writeInt64(l);
    } else if (value instanceof Double d) {
      writer.writeDouble(d);
    } else if (value instanceof String s) {
      writer.writeString(s);
    } else if (value instanceof ObjectId id) {
      writer.writeObjectId(id);
    } else if (value instanceof BigDecimal decimal) {
      writer.writeDecimal128(new Decimal128(decimal));
    } else if (value instanceof Instant instant) {
      writer.writeDateTime(instant.toEpochMilli());
    } else if (value instanceof List<?> list) {
      writer.writeStartArray();
      list.forEach(element -> write(writer, element));
      writer.writeEndArray();
    } else if (value instanceof Map<?, ?> map) {
      writer.writeStartDocument();
      map.forEach(
          (name, element) -> {
            writer.writeName((String) name);
            write(writer, element);
          });
      writer.writeEndDocument();
    } else {
      throw new IllegalArgumentException(
          "unsupported field value type " + value.getClass().getName());
    }
  }

  /**
   * Reads the reader's current value: the mapping from BSON, streamed (the change codec) or from a tree.
   *
   * @throws IllegalArgumentException for BSON types outside the supported values
   */
  static Object read(BsonReader reader) {
    BsonType type = reader.getCurrentBsonType();
    switch (type) {
      case NULL:
        reader.readNull();
        return null;
      case BOOLEAN:
        return reader.readBoolean();
      case INT32:
        return reader.readInt32();
      case INT64:
        return reader.readInt64();
      case DOUBLE:
        return reader.readDouble();
      case STRING:
        return reader.readString();
      case OBJECT_ID:
        return reader.readObjectId();
      case DATE_TIME:
        return Instant.ofEpochMilli(reader.readDateTime());
      case DECIMAL128:
        Decimal128 decimal = reader.readDecimal128();
        try {
          return decimal.bigDecimalValue();
        } catch (ArithmeticException e) {
          throw new IllegalArgumentException(
              "Decimal128 " + decimal + " has no BigDecimal equivalent", e);
        }
      case ARRAY:
        List<Object> list = new ArrayList<>();
        reader.readStartArray();
        while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
          list.add(read(reader));
        }
        reader.readEndArray();
        return Collections.unmodifiableList(list);
      case DOCUMENT:
        Map<String, Object> map = new LinkedHashMap<>();
        reader.readStartDocument();
        while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
          String name = reader.readName();
          map.put(name, read(reader));
        }
        reader.readEndDocument();
        return Collections.unmodifiableMap(map);
      default:
        throw new IllegalArgumentException("unsupported BSON type " + type);
    }
  }
}
