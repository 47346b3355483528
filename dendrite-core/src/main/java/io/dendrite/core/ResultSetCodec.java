package io.dendrite.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The byte form of a cached result set: a row count, then each row's length and bytes. Never empty,
 * so an empty result set can be cached too ({@code iqset} refuses empty values).
 */
final class ResultSetCodec<R> {
  private final RowCodec<?, R> rows;

  ResultSetCodec(RowCodec<?, R> rows) {
    this.rows = rows;
  }

  byte[] encode(Collection<R> resultSet) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + 64 * resultSet.size());
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(resultSet.size());
      for (R row : resultSet) {
        byte[] encoded = rows.encode(row);
        out.writeInt(encoded.length);
        out.write(encoded);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /** @throws IllegalArgumentException if {@code value} is not a result set's byte form */
  List<R> decode(byte[] value) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
      int count = in.readInt();
      if (count < 0 || count > value.length) {
        throw new IllegalArgumentException("not a cached result set: row count " + count);
      }
      List<R> result = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        int length = in.readInt();
        if (length < 0 || length > in.available()) {
          throw new IllegalArgumentException("not a cached result set: row length " + length);
        }
        result.add(rows.decode(in.readNBytes(length)));
      }
      return result;
    } catch (IOException e) {
      throw new IllegalArgumentException("not a cached result set", e);
    }
  }
}
