package io.dendrite.coordination;

import io.dendrite.core.DataStoreException;
import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.DendriteBusyException;
import io.dendrite.core.OutcomeUnknownException;
import io.dendrite.iq.client.IqException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The byte forms of a {@link PartitionedDendrite}'s forwarded misses and writes, and of their answers. A request
 * names the registered query or command, the bounds in the domain type's text form and, for a write, the encoded
 * command. An answer is a status and either the result (the rows of a miss) or the owner's failure, which the caller
 * throws again as the same kind of exception ({@link #rethrow}), so a forwarded operation fails as a local one would.
 */
final class ForwardedCalls {
  private ForwardedCalls() {}

  /** A forwarded miss or write: the registered name, the bounds' text forms and, for a write, its command. */
  record Call(String name, String lower, String upper, byte[] command) {}

  private static final byte OK = 0;

  /** What a failure at the owner is thrown as at the caller. */
  private enum Failure {
    DATA_STORE_UNAVAILABLE,
    DATA_STORE,
    BUSY,
    ILLEGAL_ARGUMENT,
    OUTCOME_UNKNOWN,
    CACHE,
    OTHER
  }

  static byte[] call(Call call) {
    return write(
        out -> {
          out.writeUTF(call.name());
          out.writeUTF(call.lower());
          out.writeUTF(call.upper());
          out.writeInt(call.command().length);
          out.write(call.command());
        });
  }

  /**
   * Reads {@link #call}'s output.
   *
   * @throws IllegalArgumentException if {@code body} is not one
   */
  static Call readCall(byte[] body) {
    return read(
        body,
        in -> {
          String name = in.readUTF();
          String lower = in.readUTF();
          String upper = in.readUTF();
          return new Call(name, lower, upper, block(in));
        });
  }

  static byte[] rows(List<byte[]> rows) {
    return write(
        out -> {
          out.writeByte(OK);
          out.writeInt(rows.size());
          for (byte[] row : rows) {
            out.writeInt(row.length);
            out.write(row);
          }
        });
  }

  static byte[] done() {
    return new byte[] {OK};
  }

  /** An answer carrying {@code failure}, thrown at the owner by the forwarded operation. */
  static byte[] failure(RuntimeException failure) {
    Failure kind =
        failure instanceof DataStoreUnavailableException
            ? Failure.DATA_STORE_UNAVAILABLE
            : failure instanceof DataStoreException
                ? Failure.DATA_STORE
                : failure instanceof DendriteBusyException
                    ? Failure.BUSY
                    : failure instanceof IllegalArgumentException
                        ? Failure.ILLEGAL_ARGUMENT
                        : failure instanceof OutcomeUnknownException
                            ? Failure.OUTCOME_UNKNOWN
                            : failure instanceof IqException ? Failure.CACHE : Failure.OTHER;
    return write(
        out -> {
          out.writeByte(kind.ordinal() + 1);
          out.writeUTF(truncated(String.valueOf(failure.getMessage())));
        });
  }

  /**
   * The rows of an answer to a miss.
   *
   * @throws RuntimeException the owner's failure, as {@link #rethrow}
   */
  static List<byte[]> readRows(byte[] answer, String owner) {
    return read(
        answer,
        in -> {
          rethrow(in, owner);
          int count = in.readInt();
          if (count < 0 || count > answer.length / 4) {
            throw new IOException("bad row count " + count);
          }
          List<byte[]> rows = new ArrayList<>(count);
          for (int i = 0; i < count; i++) {
            rows.add(block(in));
          }
          return rows;
        });
  }

  /**
   * Returns if the answer to a write says it was done.
   *
   * @throws RuntimeException the owner's failure, as {@link #rethrow}
   */
  static void readDone(byte[] answer, String owner) {
    read(
        answer,
        in -> {
          rethrow(in, owner);
          return null;
        });
  }

  /** Throws the failure an answer carries, as the kind of exception the owner threw; returns on success. */
  private static void rethrow(DataInputStream in, String owner) throws IOException {
    int status = in.readUnsignedByte();
    if (status == OK) {
      return;
    }
    Failure[] kinds = Failure.values();
    Failure kind = status - 1 < kinds.length ? kinds[status - 1] : Failure.OTHER;
    String message = "at the range's owner " + owner + ": " + in.readUTF();
    throw switch (kind) {
      case DATA_STORE_UNAVAILABLE -> new DataStoreUnavailableException(message, null);
      case DATA_STORE -> new DataStoreException(message, null);
      case BUSY -> new DendriteBusyException(message, null);
      case ILLEGAL_ARGUMENT -> new IllegalArgumentException(message);
      case OUTCOME_UNKNOWN -> new OutcomeUnknownException(message, null);
      case CACHE -> new IqException(message);
      case OTHER -> new IllegalStateException(message);
    };
  }

  private static String truncated(String message) {
    return message.length() > 2_000 ? message.substring(0, 2_000) + "..." : message;
  }

  private static byte[] block(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0 || length > in.available()) {
      throw new IOException("bad length " + length);
    }
    return in.readNBytes(length);
  }

  private interface Writer {
    void write(DataOutputStream out) throws IOException;
  }

  private interface Reader<T> {
    T read(DataInputStream in) throws IOException;
  }

  private static byte[] write(Writer writer) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      writer.write(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array does not fail
    }
    return bytes.toByteArray();
  }

  private static <T> T read(byte[] bytes, Reader<T> reader) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      return reader.read(in);
    } catch (IOException malformed) {
      throw new IllegalArgumentException("malformed forwarded message: " + malformed, malformed);
    }
  }
}
