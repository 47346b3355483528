package io.dendrite.iq.protocol;

import java.util.List;

/**
 * One decoded request: the command word, the remaining words of the request line, and the data
 * blocks that followed the line (already stripped of their {@code \r\n} terminators).
 *
 * <p>Words are decoded as ISO-8859-1 so that every byte of a key survives the round trip to a
 * {@link String} and back unchanged.
 *
 * @param command the first word of the line, empty for an empty line
 * @param args the words after the command, in order
 * @param blocks the data blocks, in the order the command's layout declares them
 */
public record Request(String command, List<String> args, List<byte[]> blocks) {

  public Request {
    args = List.copyOf(args);
    blocks = List.copyOf(blocks);
  }
}
