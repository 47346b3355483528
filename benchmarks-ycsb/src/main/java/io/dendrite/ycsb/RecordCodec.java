package io.dendrite.ycsb;

import io.dendrite.core.RowCodec;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The byte form of a {@link YcsbRecord} in a cache (Dendrite's result sets, the look-aside value): the key, the
 * number and length-prefixed UTF-8 field names and values.
 */
final class RecordCodec implements RowCodec<Long, YcsbRecord> {

  @Override
  public Long attributeOf(YcsbRecord row) {
    return row.number();
  }

  @Override
  public Object identityOf(YcsbRecord row) {
    return row.key();
  }

  @Override
  public byte[] encode(YcsbRecord row) {
    byte[] key = utf8(row.key());
    byte[][] texts = new byte[row.fields().size() * 2][];
    int size = 4 + key.length + 8 + 4;
    int i = 0;
    for (Map.Entry<String, String> field : row.fields().entrySet()) {
      texts[i] = utf8(field.getKey());
      texts[i + 1] = utf8(field.getValue());
      size += 8 + texts[i].length + texts[i + 1].length;
      i += 2;
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putInt(key.length).put(key).putLong(row.number()).putInt(row.fields().size());
    for (byte[] text : texts) {
      out.putInt(text.length).put(text);
    }
    return out.array();
  }

  /**
   * Reads straight from the array: a cache hit decodes every field of every row it returns, and stream
   * wrappers (a synchronized read per field) cost more than the copying.
   */
  @Override
  public YcsbRecord decode(byte[] bytes) {
    try {
      ByteBuffer in = ByteBuffer.wrap(bytes);
      String key = readText(in);
      long number = in.getLong();
      int count = in.getInt();
      if (count < 0 || count > in.remaining() / 8) {
        throw new IllegalArgumentException("field count " + count);
      }
      Map<String, String> fields = new LinkedHashMap<>(count * 2);
      for (int i = 0; i < count; i++) {
        fields.put(readText(in), readText(in));
      }
      if (in.hasRemaining()) {
        throw new IllegalArgumentException(in.remaining() + " bytes after the last field");
      }
      return new YcsbRecord(key, number, fields);
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "not an encoded YCSB record (" + bytes.length + " bytes)", e);
    }
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static String readText(ByteBuffer in) {
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException(
          "text length " + length + " with " + in.remaining() + " bytes left");
    }
    String text =
        new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
    in.position(in.position() + length);
    return text;
  }
}
