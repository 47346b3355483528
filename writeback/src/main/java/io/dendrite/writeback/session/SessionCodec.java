package io.dendrite.writeback.session;

import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The value of a session object: a format byte, the row count, then per row its key (as {@link BufferedWriteKey}
 * names it, which keeps the id's type) and its {@link ChangeSequence#encode() encoded} changes. Rows keep the
 * order the session changed them in.
 */
final class SessionCodec {
  private static final byte FORMAT = 1;

  private SessionCodec() {}

  static byte[] encode(List<EntityChanges> rows) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(FORMAT);
      out.writeInt(rows.size());
      for (EntityChanges row : rows) {
        out.writeUTF(BufferedWriteKey.of(row.key()));
        byte[] changes = row.changes().encode();
        out.writeInt(changes.length);
        out.write(changes);
      }
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
    return bytes.toByteArray();
  }

  /** @throws IllegalArgumentException when {@code value} was not made by {@link #encode} */
  static List<EntityChanges> decode(byte[] value) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
      if (in.readByte() != FORMAT) {
        throw new IllegalArgumentException("unknown session format " + value[0]);
      }
      int count = in.readInt();
      List<EntityChanges> rows = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        String key = in.readUTF();
        byte[] changes = new byte[in.readInt()];
        in.readFully(changes);
        rows.add(new EntityChanges(BufferedWriteKey.parse(key), ChangeSequence.decode(changes)));
      }
      return rows;
    } catch (IOException | RuntimeException malformed) {
      throw new IllegalArgumentException(
          "not a session value: " + malformed.getMessage(), malformed);
    }
  }
}
