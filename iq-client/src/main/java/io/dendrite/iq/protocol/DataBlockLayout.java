package io.dendrite.iq.protocol;

import java.util.List;
import java.util.Map;

/**
 * Knows, for every command that carries data, which words of its request line give the lengths of
 * the data blocks that follow. The decoder needs this before it can find the next request line, so
 * it lives beside the decoder rather than with the command implementations.
 */
final class DataBlockLayout {

  /** Commands with exactly one data block, mapped to the index (in the args) of its length. */
  private static final Map<String, Integer> SINGLE_BLOCK_LENGTH_INDEX =
      Map.ofEntries(
          Map.entry("set", 3),
          Map.entry("add", 3),
          Map.entry("replace", 3),
          Map.entry("append", 3),
          Map.entry("prepend", 3),
          Map.entry("cas", 3),
          Map.entry("iqset", 3),
          Map.entry("swap", 3),
          Map.entry("sar", 3),
          Map.entry("iqappend", 1),
          Map.entry("iqprepend", 1),
          Map.entry("oqswap", 4),
          Map.entry("oqwrite", 4),
          Map.entry("oqadd", 4),
          Map.entry("oqappend", 2),
          Map.entry("oqprepend", 2));

  private static final int[] NO_BLOCKS = new int[0];

  private DataBlockLayout() {}

  /**
   * Returns the lengths of the data blocks that follow a request line, in order; empty when the
   * command carries no data.
   *
   * @throws MalformedRequestException if a length is missing or unreadable; the data cannot be
   *     skipped then, because its length is unknown
   */
  static int[] blockLengths(String command, List<String> args) {
    Integer index = SINGLE_BLOCK_LENGTH_INDEX.get(command);
    if (index != null) {
      if (args.size() <= index) {
        throw new MalformedRequestException("bad command line format");
      }
      return new int[] {length(args.get(index))};
    }
    switch (command) {
      case "oqappends", "oqswaps" -> {
        return tupleBlockLengths(args);
      }
      case "mappend" -> {
        return multiAppendBlockLengths(args);
      }
      default -> {
        return NO_BLOCKS;
      }
    }
  }

  /** {@code <sid> (<key> <flags> <exptime> <bytes>)+}: one block per tuple whose bytes > 0. */
  private static int[] tupleBlockLengths(List<String> args) {
    int tuples = (args.size() - 1) / 4;
    if (tuples == 0 || (args.size() - 1) % 4 != 0) {
      throw new MalformedRequestException("bad command line format");
    }
    return java.util.stream.IntStream.range(0, tuples)
        .map(t -> length(args.get(1 + t * 4 + 3)))
        .filter(n -> n > 0)
        .toArray();
  }

  /** {@code <key> <pimem> <bytes1> [<bytes2> ...] [noreply]}. */
  private static int[] multiAppendBlockLengths(List<String> args) {
    int end =
        !args.isEmpty() && args.get(args.size() - 1).equals("noreply")
            ? args.size() - 1
            : args.size();
    if (end < 3) {
      throw new MalformedRequestException("bad command line format");
    }
    return args.subList(2, end).stream().mapToInt(DataBlockLayout::length).toArray();
  }

  /**
   * Parses a block length. Lengths beyond {@code Integer.MAX_VALUE - 2} are refused without
   * skipping anything, as stock memcached does: no honest client sends one.
   */
  private static int length(String word) {
    if (word.isEmpty() || word.length() > 10) {
      throw new MalformedRequestException("bad data length");
    }
    long value = 0;
    for (int i = 0; i < word.length(); i++) {
      char c = word.charAt(i);
      if (c < '0' || c > '9') {
        throw new MalformedRequestException("bad data length");
      }
      value = value * 10 + (c - '0');
    }
    if (value > Integer.MAX_VALUE - 2) {
      throw new MalformedRequestException("bad data length");
    }
    return (int) value;
  }
}
