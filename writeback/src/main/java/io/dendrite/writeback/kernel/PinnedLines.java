package io.dendrite.writeback.kernel;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The shape of every index the write-back engines keep in the cache (pending-writes partitions, session queues,
 * session mappings): a list of text lines, one pinned value per key, replicated and rewritten whole.
 */
public final class PinnedLines {
  private PinnedLines() {}

  /** The non-empty lines of the replicated value at {@code key} now (a lock-free snapshot; none if it is absent). */
  public static List<String> read(PinnedReplicas replicas, String key) {
    return lines(replicas.get(key).orElse(null));
  }

  /** The non-empty lines of {@code value} ({@code null}: none), a mutable list. */
  public static List<String> lines(byte[] value) {
    List<String> lines = new ArrayList<>();
    if (value == null) {
      return lines;
    }
    for (String line : new String(value, StandardCharsets.UTF_8).split("\n")) {
      if (!line.isEmpty()) {
        lines.add(line);
      }
    }
    return lines;
  }

  /** The value holding {@code lines}; {@code null} (delete the key) when there are none. */
  public static byte[] value(List<String> lines) {
    return lines.isEmpty()
        ? null
        : (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8);
  }
}
