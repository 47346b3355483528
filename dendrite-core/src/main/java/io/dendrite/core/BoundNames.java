package io.dendrite.core;

import java.util.Map;

/**
 * The rule for the names queries and write commands are bound under ({@link Dendrite.Builder#query}, {@link
 * Dendrite.Builder#command}): 1 to 200 characters, not blank, each bound once. Every deployment binds by it, so a
 * name one accepts the others accept; 200 keeps a forwarded call's frame small.
 */
public final class BoundNames {
  private static final int MAX_LENGTH = 200;

  private BoundNames() {}

  /**
   * Binds {@code value} under {@code name} in {@code bound}.
   *
   * @throws IllegalArgumentException if {@code name} breaks the rule or is bound already
   */
  public static <T> void bind(Map<String, T> bound, String name, T value) {
    if (name == null || name.isBlank() || name.length() > MAX_LENGTH) {
      throw new IllegalArgumentException(
          "a name must be 1 to " + MAX_LENGTH + " characters, not blank, got \"" + name + "\"");
    }
    if (bound.putIfAbsent(name, value) != null) {
      throw new IllegalArgumentException(name + " is bound already");
    }
  }

  /**
   * What is bound under {@code name} in {@code bound}.
   *
   * @param what what is bound ("query", "write command"), for the message
   * @param range the Dendrite's {@link Dendrite#rangeName}, for the message
   * @throws IllegalArgumentException naming what is bound if nothing is bound under {@code name}
   */
  public static <T> T lookUp(Map<String, T> bound, String what, String name, String range) {
    T value = name == null ? null : bound.get(name);
    if (value == null) {
      throw new IllegalArgumentException(
          "no " + what + " named \"" + name + "\" on " + range + "; bound: " + bound.keySet());
    }
    return value;
  }

  /**
   * Returns {@code argument} as a {@code type}, the argument type of the write command bound under {@code name}.
   *
   * @throws IllegalArgumentException if it is not one
   */
  public static <C> C argument(String name, Class<C> type, Object argument) {
    if (!type.isInstance(argument)) {
      throw new IllegalArgumentException(
          "write command \""
              + name
              + "\" takes a "
              + type.getName()
              + ", got "
              + (argument == null ? "null" : "a " + argument.getClass().getName()));
    }
    return type.cast(argument);
  }
}
