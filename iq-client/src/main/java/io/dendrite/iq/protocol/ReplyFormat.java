package io.dendrite.iq.protocol;

/**
 * How to read the reply to a request. Replies are not self-describing (a {@code VALUE} line has
 * three numeric fields after {@code get} and four after {@code iqget}; {@code nv:} in a key is an
 * internal prefix after {@code iqget} but may be part of a user key after {@code get}), so the
 * client tells the parser what it asked.
 */
public enum ReplyFormat {
  /** One line: storage commands, {@code delete}, {@code qareg}, {@code commit}, {@code dar} ... */
  LINE,
  /**
   * Entries up to {@code END}, standard layout {@code VALUE <key> <flags> <bytes> [<cas>]}, keys
   * taken literally: {@code get}, {@code gets}, {@code stats}.
   */
  VALUES,
  /**
   * Entries up to {@code END}, standard layout, internal {@code ls:}/{@code nv:} prefixes
   * removed: {@code ciget}, {@code cogets}, {@code oqread}, {@code oqincr}.
   */
  SESSION_ENTRIES,
  /**
   * Entries up to {@code END}, IQ layout {@code VALUE <key> <flags> <p> <bytes>}, internal
   * prefixes removed: {@code iqget} and {@code qaread}.
   */
  IQ_ENTRIES,
  /** One result line per key (possibly empty) up to {@code END}: {@code oqappends}, {@code oqswaps}. */
  BATCH
}
