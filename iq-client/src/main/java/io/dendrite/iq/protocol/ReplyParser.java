package io.dendrite.iq.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads one reply from the front of a buffer. Stateless: when the buffer does not yet hold the
 * whole reply it returns {@code null} and leaves the reader index where it was, so the caller
 * simply retries once more bytes have arrived.
 */
public final class ReplyParser {

  private static final String LEASE_PREFIX = "ls:";
  private static final String STAGED_PREFIX = "nv:";

  private ReplyParser() {}

  /**
   * Parses the reply at the buffer's reader index.
   *
   * @param in     the received bytes; on success the reader index moves past the reply
   * @param format what the request expects back
   * @return the reply, or {@code null} if it is not complete yet
   * @throws MalformedReplyException if the bytes cannot be a reply of that format
   */
  public static Reply parse(ByteBuf in, ReplyFormat format) {
    int start = in.readerIndex();
    Reply reply = format == ReplyFormat.LINE ? parseLine(in) : parseEntries(in, format);
    if (reply == null) {
      in.readerIndex(start);
    }
    return reply;
  }

  private static Reply parseLine(ByteBuf in) {
    String line = readLine(in);
    return line == null ? null : new Reply.Status(line);
  }

  private static Reply parseEntries(ByteBuf in, ReplyFormat format) {
    List<Reply.Entry> entries = new ArrayList<>();
    boolean first = true;
    while (true) {
      String line = readLine(in);
      if (line == null) {
        return null;
      }
      if (line.equals("END")) {
        return new Reply.Entries(entries);
      }
      if (format == ReplyFormat.BATCH) {
        if (first && isWholeReplyStatus(line)) {
          return new Reply.Status(line);
        }
        entries.add(new Reply.Line(line));
        first = false;
        continue;
      }
      if (line.isEmpty()) {
        // qaread/oqread misses put an empty line before END.
        continue;
      }
      String[] words = words(line);
      switch (words[0]) {
        case "VALUE" -> {
          if (!readValue(in, format, words, line, entries)) {
            return null;
          }
        }
        case "LVALUE" -> entries.add(lvalue(words, line));
        case "LEASE" -> {
          if (!readLease(in, words, line, entries)) {
            return null;
          }
        }
        case "NOVALUE" -> entries.add(noValue(line));
        case "STAT" ->
            entries.add(
                new Reply.Stat(
                    word(words, 1, line),
                    line.substring(Math.min(line.length(), 6 + words[1].length()))));
        case "RETRY" -> {
          if (words.length == 1 && first) {
            return new Reply.Status(line);
          }
          entries.add(new Reply.Retry(word(words, 1, line)));
        }
        default -> {
          if (first) {
            return new Reply.Status(line);
          }
          throw new MalformedReplyException("unexpected line inside a reply: " + line);
        }
      }
      first = false;
    }
  }

  private static boolean isWholeReplyStatus(String line) {
    return line.equals("ABORT")
        || line.equals("INVALID")
        || line.startsWith("FENCED_OUT ")
        || line.startsWith("ERROR")
        || line.startsWith("CLIENT_ERROR")
        || line.startsWith("SERVER_ERROR");
  }

  private static boolean readValue(
      ByteBuf in, ReplyFormat format, String[] words, String line, List<Reply.Entry> entries) {
    if (words.length == 2) {
      entries.add(new Reply.Counter(number(words[1], line)));
      return true;
    }
    String key = word(words, 1, line);
    boolean staged = false;
    if (format != ReplyFormat.VALUES && key.startsWith(STAGED_PREFIX)) {
      key = key.substring(STAGED_PREFIX.length());
      staged = true;
    }
    int flags = (int) number(word(words, 2, line), line);
    boolean pending = false;
    long cas = 0;
    int length;
    if (format == ReplyFormat.IQ_ENTRIES) {
      pending = number(word(words, 3, line), line) != 0;
      length = (int) number(word(words, 4, line), line);
    } else {
      length = (int) number(word(words, 3, line), line);
      cas = words.length > 4 ? number(words[4], line) : 0;
    }
    byte[] data = readBlock(in, length, line);
    if (data == null) {
      return false;
    }
    entries.add(new Reply.Value(key, flags, pending, cas, staged, data));
    return true;
  }

  /** {@code LVALUE ls:<key> 0 <p> <tok>} (iqget, qaread) or {@code LVALUE ls:<key> <flags> <tok>} (ciget). */
  private static Reply.Entry lvalue(String[] words, String line) {
    String key = stripLeasePrefix(word(words, 1, line));
    if (words.length >= 5) {
      return new Reply.Lease(key, number(words[4], line), number(words[3], line) != 0);
    }
    return new Reply.Lease(key, number(word(words, 3, line), line), false);
  }

  /** {@code LEASE <key> <flags> <p> <tok> <bytes>} + data (qaread hit) or {@code LEASE <key> <tok>} (cogets). */
  private static boolean readLease(
      ByteBuf in, String[] words, String line, List<Reply.Entry> entries) {
    String key = stripLeasePrefix(word(words, 1, line));
    if (words.length < 6) {
      entries.add(new Reply.Lease(key, number(word(words, 2, line), line), false));
      return true;
    }
    int flags = (int) number(words[2], line);
    boolean pending = number(words[3], line) != 0;
    long token = number(words[4], line);
    byte[] data = readBlock(in, (int) number(words[5], line), line);
    if (data == null) {
      return false;
    }
    entries.add(new Reply.Lease(key, token, pending));
    entries.add(new Reply.Value(key, flags, pending, 0, false, data));
    return true;
  }

  /** {@code NOVALUE  0}, {@code NOVALUE <key> 0} or {@code NOVALUE <key>}: the word after the first space. */
  private static Reply.Entry noValue(String line) {
    String[] parts = line.split(" ", -1);
    return new Reply.NoValue(parts.length > 1 ? stripLeasePrefix(parts[1]) : "");
  }

  /**
   * The line split at runs of spaces, as {@code line.split(" +")} would (a leading space gives an empty first
   * word, trailing spaces nothing) without compiling a regular expression for every reply line.
   */
  static String[] words(String line) {
    if (line.isEmpty()) {
      return new String[] {""};
    }
    List<String> words = new ArrayList<>(6);
    int length = line.length();
    int start = 0;
    while (start < length) {
      int space = line.indexOf(' ', start);
      int end = space < 0 ? length : space;
      if (end > start || words.isEmpty() && start == 0) {
        words.add(line.substring(start, end));
      }
      if (space < 0) {
        break;
      }
      start = space + 1;
    }
    if (words.size() == 1 && words.get(0).isEmpty()) {
      return new String
          [0]; // only spaces: split drops the trailing empty words, which are all there are
    }
    return words.toArray(new String[0]);
  }

  private static String stripLeasePrefix(String key) {
    return key.startsWith(LEASE_PREFIX) ? key.substring(LEASE_PREFIX.length()) : key;
  }

  private static String word(String[] words, int index, String line) {
    if (index >= words.length) {
      throw new MalformedReplyException("missing field " + index + " in: " + line);
    }
    return words[index];
  }

  private static long number(String text, String line) {
    try {
      return Long.parseUnsignedLong(text);
    } catch (NumberFormatException e) {
      throw new MalformedReplyException("not a number '" + text + "' in: " + line);
    }
  }

  /** The next CRLF-terminated line without its terminator, or null if the line is incomplete. */
  private static String readLine(ByteBuf in) {
    int lf = in.forEachByte(in.readerIndex(), in.readableBytes(), ByteProcessor.FIND_LF);
    if (lf < 0) {
      return null;
    }
    int end = lf > in.readerIndex() && in.getByte(lf - 1) == '\r' ? lf - 1 : lf;
    String line = in.toString(in.readerIndex(), end - in.readerIndex(), StandardCharsets.US_ASCII);
    in.readerIndex(lf + 1);
    return line;
  }

  private static byte[] readBlock(ByteBuf in, int length, String header) {
    if (length < 0) {
      throw new MalformedReplyException("negative length in: " + header);
    }
    if (in.readableBytes() < length + 2) {
      return null;
    }
    byte[] data = new byte[length];
    in.readBytes(data);
    if (in.readByte() != '\r' || in.readByte() != '\n') {
      throw new MalformedReplyException("data block not followed by CRLF after: " + header);
    }
    return data;
  }
}
