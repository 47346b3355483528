package io.dendrite.core;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * The byte form of a cached result set: a row count, then each row's length and bytes, then any change records
 * appended since ({@link ChangeRecords}), each a negative tag, its length and its bytes. Never empty, so an empty
 * result set can be cached too ({@code iqset} refuses empty values).
 */
final class ResultSetCodec<R> {
  /** Marks a change record; a row count is never negative, so the tag cannot be mistaken for one. */
  private static final int CHANGE_RECORD = -1;

  private final RowCodec<?, R> rows;

  ResultSetCodec(RowCodec<?, R> rows) {
    this.rows = rows;
  }

  /** A decoded value: its rows and the change records appended after them, oldest first. */
  record Decoded<R>(List<R> rows, List<byte[]> changes) {}

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

  /** What a write appends to a cached value to add {@code change} to it. */
  static byte[] changeRecord(byte[] change) {
    return ByteBuffer.allocate(8 + change.length)
        .putInt(CHANGE_RECORD)
        .putInt(change.length)
        .put(change)
        .array();
  }

  /**
   * Reads straight from the array rather than through stream wrappers: every cache hit decodes its
   * result set, and a synchronized stream read per row costs more than the copying.
   *
   * @throws IllegalArgumentException if {@code value} is not a result set's byte form
   */
  Decoded<R> decode(byte[] value) {
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
      result.add(rows.decode(block(value, in, "row")));
    }
    List<byte[]> changes = List.of();
    while (in.hasRemaining()) {
      int tag = in.remaining() >= 4 ? in.getInt() : 0;
      if (tag != CHANGE_RECORD) {
        throw new IllegalArgumentException(
            "not a cached result set: " + tag + " where a change record starts");
      }
      if (changes.isEmpty()) {
        changes = new ArrayList<>();
      }
      changes.add(block(value, in, "change record"));
    }
    return new Decoded<>(result, changes);
  }

  /** A length-prefixed block at the buffer's position, which moves past it. */
  private static byte[] block(byte[] value, ByteBuffer in, String what) {
    int length = in.remaining() >= 4 ? in.getInt() : -1;
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("not a cached result set: " + what + " length " + length);
    }
    byte[] block = Arrays.copyOfRange(value, in.position(), in.position() + length);
    in.position(in.position() + length);
    return block;
  }
}
