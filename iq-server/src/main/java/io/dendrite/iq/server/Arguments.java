package io.dendrite.iq.server;

import io.dendrite.iq.protocol.MalformedRequestException;
import io.dendrite.iq.protocol.Request;
import java.util.List;

/**
 * Typed, validated access to the words and data blocks of one request. Every accessor throws
 * {@link MalformedRequestException} with the reason the client will see, so command code reads as
 * the happy path.
 */
final class Arguments {

  /** Longest key, tid or sid accepted, as in memcached. */
  static final int MAX_KEY_LENGTH = 250;

  private final List<String> words;
  private final List<byte[]> blocks;
  private final boolean noreply;
  private final Client client;

  private Arguments(List<String> words, List<byte[]> blocks, boolean noreply, Client client) {
    this.words = words;
    this.blocks = blocks;
    this.noreply = noreply;
    this.client = client;
  }

  /**
   * Wraps a request from {@code client}; a trailing {@code noreply} becomes a flag when the command accepts one.
   */
  static Arguments of(Request request, boolean acceptsNoreply, Client client) {
    List<String> args = request.args();
    boolean noreply =
        acceptsNoreply && !args.isEmpty() && args.get(args.size() - 1).equals("noreply");
    return new Arguments(
        noreply ? args.subList(0, args.size() - 1) : args, request.blocks(), noreply, client);
  }

  /** Who sent the request. */
  Client client() {
    return client;
  }

  int size() {
    return words.size();
  }

  boolean noreply() {
    return noreply;
  }

  String word(int index) {
    if (index >= words.size()) {
      throw new MalformedRequestException("bad command line format");
    }
    return words.get(index);
  }

  List<String> words(int fromIndex) {
    return words.subList(fromIndex, words.size());
  }

  void requireCount(int min, int max) {
    if (words.size() < min || words.size() > max) {
      throw new MalformedRequestException("bad command line format");
    }
  }

  /** A key, tid or sid: 1 to 250 bytes. */
  String key(int index) {
    String key = word(index);
    if (key.length() > MAX_KEY_LENGTH) {
      throw new MalformedRequestException("key too long");
    }
    return key;
  }

  /** A tid or sid, as the sender's own: see {@link Client#own}. */
  String tid(int index) {
    return client.own(key(index));
  }

  /** Memcached flags: an unsigned 32-bit number. */
  long flags(int index) {
    long value = unsigned(index, "bad flags");
    if (value > 0xFFFF_FFFFL) {
      throw new MalformedRequestException("bad flags");
    }
    return value;
  }

  /** An expiry time in memcached's encoding (may be negative: already expired). */
  long exptime(int index) {
    try {
      return Long.parseLong(word(index));
    } catch (NumberFormatException e) {
      throw new MalformedRequestException("bad exptime");
    }
  }

  /** A lease token, CAS unique or other non-negative 64-bit number. */
  long number(int index) {
    return unsigned(index, "bad command line format");
  }

  /** An incr/decr delta: unsigned 64-bit, returned as its two's-complement bits. */
  long delta(int index) {
    return unsigned(index, "invalid numeric delta argument");
  }

  /** The pimem field: {@code 0} or {@code 1}. */
  boolean pimem(int index) {
    return bit(index, "pimem");
  }

  /** A 0/1 field such as {@code commit}'s pending bit. */
  boolean bit(int index, String name) {
    return switch (word(index)) {
      case "0" -> false;
      case "1" -> true;
      default -> throw new MalformedRequestException("bad " + name + " field, expected 0 or 1");
    };
  }

  /** These arguments without the first {@code count} words, for commands that prefix a sid. */
  Arguments drop(int count) {
    if (count > words.size()) {
      throw new MalformedRequestException("bad command line format");
    }
    return new Arguments(words.subList(count, words.size()), blocks, noreply, client);
  }

  byte[] block(int index) {
    return blocks.get(index);
  }

  List<byte[]> blocks() {
    return blocks;
  }

  private long unsigned(int index, String reason) {
    String word = word(index);
    if (word.isEmpty() || word.length() > 20 || word.charAt(0) == '-' || word.charAt(0) == '+') {
      throw new MalformedRequestException(reason);
    }
    try {
      return Long.parseUnsignedLong(word);
    } catch (NumberFormatException e) {
      throw new MalformedRequestException(reason);
    }
  }
}
