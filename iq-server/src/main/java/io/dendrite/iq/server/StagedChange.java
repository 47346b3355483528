package io.dendrite.iq.server;

/**
 * What a session will do to one key at {@code dcommit}. Staged changes live in the session's
 * record, not in the user key space.
 */
sealed interface StagedChange {

  /** The value the session itself sees for the key, given the currently cached {@code current}. */
  Item applyTo(Item current);

  /** Replace the value with {@code item}. */
  record Replace(Item item) implements StagedChange {
    @Override
    public Item applyTo(Item current) {
      return item;
    }
  }

  /** Delete the key. */
  record Delete() implements StagedChange {
    @Override
    public Item applyTo(Item current) {
      return null;
    }
  }

  /**
   * Concatenate {@code prefix} before and {@code suffix} after whatever value is cached at commit.
   * Every {@code oqappend}/{@code oqprepend} extends these, so no delta is lost.
   */
  record Deltas(byte[] prefix, byte[] suffix) implements StagedChange {
    @Override
    public Item applyTo(Item current) {
      if (current == null) {
        return null;
      }
      return current.withValue(Bytes.concat(prefix, current.value(), suffix));
    }
  }
}
