package io.dendrite.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.UUID;

/**
 * The byte form of a Java record whose components are of common value types, so that rows and write commands need no
 * hand-written codec ({@link RowCodec#ofRecord}, {@link WriteCommand#of}). Components are written in declaration order:
 * primitives and their boxes, {@link String}, {@code byte[]}, {@link BigDecimal}, {@link Instant}, {@link LocalDate},
 * {@link UUID} and enums (by name); a reference component is preceded by one byte saying whether it is null. The form
 * has no version: a record whose components change cannot read values cached before, which a deployment of the new
 * shape must start without (a new collection name, or the cache flushed).
 *
 * @param <T> the record type
 */
final class RecordBytes<T extends Record> {
  private final Class<T> type;
  private final Method[] accessors;
  private final Class<?>[] types;
  private final Constructor<T> canonical;

  private RecordBytes(Class<T> type) {
    this.type = type;
    RecordComponent[] components = type.getRecordComponents();
    this.accessors = new Method[components.length];
    this.types = new Class<?>[components.length];
    for (int i = 0; i < components.length; i++) {
      types[i] = components[i].getType();
      if (!supported(types[i])) {
        throw new IllegalArgumentException(
            "record "
                + type.getName()
                + "'s component "
                + components[i].getName()
                + " is a "
                + types[i].getName()
                + ", which has no built-in byte form: write a codec by hand");
      }
      accessors[i] = components[i].getAccessor();
    }
    try {
      this.canonical = type.getDeclaredConstructor(types);
    } catch (NoSuchMethodException impossible) {
      throw new IllegalStateException("a record without its canonical constructor", impossible);
    }
    if (!canonical.trySetAccessible()
        || !Arrays.stream(accessors).allMatch(Method::trySetAccessible)) {
      throw new IllegalArgumentException(
          "record "
              + type.getName()
              + " is not accessible to io.dendrite.core: make it public in an exported package, or open its"
              + " package to io.dendrite.core");
    }
  }

  /**
   * The byte form of {@code type}'s records.
   *
   * @throws IllegalArgumentException if {@code type} is not a record, or has a component of another type, or cannot
   *     be read from this module
   */
  static <T extends Record> RecordBytes<T> of(Class<T> type) {
    if (type == null || !type.isRecord()) {
      throw new IllegalArgumentException("a record type is required, got " + type);
    }
    return new RecordBytes<>(type);
  }

  byte[] encode(T value) {
    if (!type.isInstance(value)) {
      throw new IllegalArgumentException(
          "a "
              + type.getName()
              + " is required, got "
              + (value == null ? "null" : value.getClass().getName()));
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      for (int i = 0; i < accessors.length; i++) {
        write(out, types[i], accessors[i].invoke(value));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
    } catch (IllegalAccessException | InvocationTargetException e) {
      throw new IllegalStateException("reading a component of " + type.getName(), e);
    }
    return bytes.toByteArray();
  }

  /**
   * Reads a record back from {@link #encode}'s output.
   *
   * @throws IllegalArgumentException if {@code bytes} is not one (a record of another shape, or truncated)
   */
  T decode(byte[] bytes) {
    Object[] values = new Object[types.length];
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      for (int i = 0; i < types.length; i++) {
        values[i] = read(in, types[i]);
      }
      if (in.available() > 0) {
        throw new IllegalArgumentException(
            in.available() + " bytes left over: not a " + type.getName() + " of this shape");
      }
      return canonical.newInstance(values);
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("not the byte form of a " + type.getName(), e);
    } catch (InstantiationException | IllegalAccessException | InvocationTargetException e) {
      throw new IllegalArgumentException(
          "the record " + type.getName() + " refused the decoded values", e);
    }
  }

  private static boolean supported(Class<?> type) {
    return type.isPrimitive()
        || type == Boolean.class
        || type == Byte.class
        || type == Short.class
        || type == Character.class
        || type == Integer.class
        || type == Long.class
        || type == Float.class
        || type == Double.class
        || type == String.class
        || type == byte[].class
        || type == BigDecimal.class
        || type == Instant.class
        || type == LocalDate.class
        || type == UUID.class
        || type.isEnum();
  }

  private static void write(DataOutputStream out, Class<?> type, Object value) throws IOException {
    if (!type.isPrimitive()) {
      out.writeBoolean(value != null);
      if (value == null) {
        return;
      }
    }
    if (type == boolean.class || type == Boolean.class) {
      out.writeBoolean((Boolean) value);
    } else if (type == byte.class || type == Byte.class) {
      out.writeByte((Byte) value);
    } else if (type == short.class || type == Short.class) {
      out.writeShort((Short) value);
    } else if (type == char.class || type == Character.class) {
      out.writeChar((Character) value);
    } else if (type == int.class || type == Integer.class) {
      out.writeInt((Integer) value);
    } else if (type == long.class || type == Long.class) {
      out.writeLong((Long) value);
    } else if (type == float.class || type == Float.class) {
      out.writeFloat((Float) value);
    } else if (type == double.class || type == Double.class) {
      out.writeDouble((Double) value);
    } else if (type == byte[].class) {
      byte[] array = (byte[]) value;
      out.writeInt(array.length);
      out.write(array);
    } else if (type == Instant.class) {
      out.writeLong(((Instant) value).getEpochSecond());
      out.writeInt(((Instant) value).getNano());
    } else if (type == LocalDate.class) {
      out.writeLong(((LocalDate) value).toEpochDay());
    } else if (type == UUID.class) {
      out.writeLong(((UUID) value).getMostSignificantBits());
      out.writeLong(((UUID) value).getLeastSignificantBits());
    } else {
      // String, BigDecimal and enums by their text: writeUTF is limited to 64 KiB, so a length and
      // UTF-8 bytes.
      byte[] text =
          (type.isEnum() ? ((Enum<?>) value).name() : value.toString())
              .getBytes(java.nio.charset.StandardCharsets.UTF_8);
      out.writeInt(text.length);
      out.write(text);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Object read(DataInputStream in, Class<?> type) throws IOException {
    if (!type.isPrimitive() && !in.readBoolean()) {
      return null;
    }
    if (type == boolean.class || type == Boolean.class) {
      return in.readBoolean();
    } else if (type == byte.class || type == Byte.class) {
      return in.readByte();
    } else if (type == short.class || type == Short.class) {
      return in.readShort();
    } else if (type == char.class || type == Character.class) {
      return in.readChar();
    } else if (type == int.class || type == Integer.class) {
      return in.readInt();
    } else if (type == long.class || type == Long.class) {
      return in.readLong();
    } else if (type == float.class || type == Float.class) {
      return in.readFloat();
    } else if (type == double.class || type == Double.class) {
      return in.readDouble();
    } else if (type == byte[].class) {
      return in.readNBytes(length(in));
    } else if (type == Instant.class) {
      return Instant.ofEpochSecond(in.readLong(), in.readInt());
    } else if (type == LocalDate.class) {
      return LocalDate.ofEpochDay(in.readLong());
    } else if (type == UUID.class) {
      return new UUID(in.readLong(), in.readLong());
    }
    String text = new String(in.readNBytes(length(in)), java.nio.charset.StandardCharsets.UTF_8);
    if (type == String.class) {
      return text;
    } else if (type == BigDecimal.class) {
      return new BigDecimal(text);
    }
    return Enum.valueOf((Class<? extends Enum>) type, text);
  }

  private static int length(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0 || length > in.available()) {
      throw new IOException("a length of " + length + " with " + in.available() + " bytes left");
    }
    return length;
  }
}
