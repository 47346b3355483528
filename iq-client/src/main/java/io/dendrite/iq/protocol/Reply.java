package io.dendrite.iq.protocol;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One complete reply from a memcached or IQ server, as the client sees it.
 *
 * <p>A reply is either a single {@link Status} line ({@code STORED}, {@code OK 0 14},
 * {@code SERVER_ERROR ...}) or a list of {@link Entries} terminated on the wire by
 * {@code END}. The many spellings the IQ family uses for one concept ({@code NOVALUE  0},
 * {@code NOVALUE <key> 0}, {@code LVALUE ls:<key> ...}, {@code VALUE nv:<key> ...}) are
 * folded into one entry type each by {@link ReplyParser}.
 */
public sealed interface Reply permits Reply.Status, Reply.Entries {

  /** The token IQ servers put in a lease reply to say "refused, somebody else holds a lease". */
  long HOT_MISS_TOKEN = 3;

  /**
   * A single-line reply.
   *
   * @param line the line without its CRLF, e.g. {@code "OK_NOVALUE 0 15"}
   */
  record Status(String line) implements Reply {
    /** The first word of the line, e.g. {@code "SERVER_ERROR"}. */
    public String word() {
      int space = line.indexOf(' ');
      return space < 0 ? line : line.substring(0, space);
    }
  }

  /**
   * A multi-part reply that the server ended with {@code END}.
   *
   * @param entries the parts in wire order; empty for a plain miss
   */
  record Entries(List<Entry> entries) implements Reply {
    public Entries {
      entries = List.copyOf(entries);
    }
  }

  /** One part of an {@link Entries} reply. */
  sealed interface Entry permits Value, Lease, NoValue, Retry, Counter, Stat, Line {}

  /**
   * A cached value.
   *
   * @param key     the key as the server named it, without an {@code nv:} prefix
   * @param flags   the client flags stored with the value
   * @param pending the TARDIS pending bit (IQ replies only; false elsewhere)
   * @param cas     the CAS unique ({@code gets} only; 0 elsewhere)
   * @param staged  true when the server served a staged copy ({@code VALUE nv:<key>})
   * @param data    the value bytes
   */
  record Value(String key, int flags, boolean pending, long cas, boolean staged, byte[] data)
      implements Entry {
    @Override
    public String toString() {
      return "Value["
          + key
          + ", flags="
          + flags
          + ", pending="
          + pending
          + ", cas="
          + cas
          + ", staged="
          + staged
          + ", data="
          + new String(data, StandardCharsets.UTF_8)
          + "]";
    }
  }

  /**
   * A lease grant or refusal ({@code LVALUE}, {@code LEASE <key> ...}).
   *
   * @param key     the key, without an {@code ls:} prefix
   * @param token   the lease token; {@link #HOT_MISS_TOKEN} means refused
   * @param pending the TARDIS pending bit, where the reply carries one
   */
  record Lease(String key, long token, boolean pending) implements Entry {
    /** True when the server refused the lease because another holder has one. */
    public boolean refused() {
      return token == HOT_MISS_TOKEN;
    }
  }

  /**
   * "No value and no lease for you": go to the data store, do not fill.
   *
   * @param key the key when the reply names one, otherwise empty
   */
  record NoValue(String key) implements Entry {}

  /**
   * A per-key {@code RETRY} inside a {@code cogets} reply.
   *
   * @param key the key to retry
   */
  record Retry(String key) implements Entry {}

  /**
   * The {@code VALUE <n>} that {@code oqincr}/{@code oqdecr} answer with.
   *
   * @param value the staged counter value
   */
  record Counter(long value) implements Entry {}

  /**
   * One {@code STAT <name> <value>} line.
   *
   * @param name  the statistic's name
   * @param value its value as text
   */
  record Stat(String name, String value) implements Entry {}

  /**
   * One per-key result line of a batch command ({@code oqappends}, {@code oqswaps}); may be empty.
   *
   * @param text the line without CRLF
   */
  record Line(String text) implements Entry {}
}
