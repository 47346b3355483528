package io.dendrite.ycsb;

import io.dendrite.core.RowCodec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
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
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + row.fields().size() * 112);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      writeText(out, row.key());
      out.writeLong(row.number());
      out.writeInt(row.fields().size());
      for (Map.Entry<String, String> field : row.fields().entrySet()) {
        writeText(out, field.getKey());
        writeText(out, field.getValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  @Override
  public YcsbRecord decode(byte[] bytes) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      String key = readText(in);
      long number = in.readLong();
      int count = in.readInt();
      Map<String, String> fields = new LinkedHashMap<>();
      for (int i = 0; i < count; i++) {
        fields.put(readText(in), readText(in));
      }
      return new YcsbRecord(key, number, fields);
    } catch (IOException e) {
      throw new IllegalArgumentException("not an encoded YCSB record (" + bytes.length + " bytes)", e);
    }
  }

  private static void writeText(DataOutputStream out, String text) throws IOException {
    byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    out.writeInt(utf8.length);
    out.write(utf8);
  }

  private static String readText(DataInputStream in) throws IOException {
    byte[] utf8 = new byte[in.readInt()];
    in.readFully(utf8);
    return new String(utf8, StandardCharsets.UTF_8);
  }
}
