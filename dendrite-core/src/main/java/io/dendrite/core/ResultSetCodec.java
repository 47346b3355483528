package io.dendrite.core;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
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
    List<byte[]> encoded = new ArrayList<>(resultSet.size());
    int size = 4;
    for (R row : resultSet) {
      byte[] bytes = rows.encode(row);
      encoded.add(bytes);
      size += 4 + bytes.length;
    }
    ByteBuffer out = ByteBuffer.allocate(size).putInt(encoded.size());
    encoded.forEach(bytes -> out.putInt(bytes.length).put(bytes));
    return out.array();
  }

  /**
   * Reads straight from the array rather than through stream wrappers: every cache hit decodes its
   * result set, and a synchronized stream read per row costs more than the copying.
   *
   * @throws IllegalArgumentException if {@code value} is not a result set's byte form
   */
  List<R> decode(byte[] value) {
    ByteBuffer in = ByteBuffer.wrap(value);
    if (in.remaining() < 4) {
      throw new IllegalArgumentException("not a cached result set: " + value.length + " bytes");
    }
    int count = in.getInt();
    if (count < 0 || count > in.remaining() / 4) {
      throw new IllegalArgumentException("not a cached result set: row count " + count);
    }
    List<R> result = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int length = in.remaining() >= 4 ? in.getInt() : -1;
      if (length < 0 || length > in.remaining()) {
        throw new IllegalArgumentException("not a cached result set: row length " + length);
      }
      result.add(rows.decode(Arrays.copyOfRange(value, in.position(), in.position() + length)));
      in.position(in.position() + length);
    }
    return result;
  }
}
