package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;

/**
 * What became of a write, a lease operation or a transaction/session end. Constants are declared
 * from best to worst: when an operation fans out to several servers, the worst one is reported.
 */
public enum Outcome {
  /** Done: stored, deleted, registered, committed. */
  OK,
  /** The key (or the CAS/replace target) was not there. */
  NOT_FOUND,
  /** A {@code cas} lost against a newer write. */
  EXISTS,
  /** Not stored: condition not met, lease missing or voided, or memory full (the IQ protocol cannot tell these apart). */
  NOT_STORED,
  /** The lease token did not match, or the server had no lease for it. */
  INVALID,
  /** The store was refused because the server's pinned-memory quota is used up. */
  PINNED_MEMORY_FULL,
  /**
   * A server that evicts nothing had no memory for the value: stock memcached run with {@code -M} answers {@code
   * SERVER_ERROR out of memory storing object}, and nothing was stored.
   */
  MEMORY_FULL,
  /** Another transaction or session holds a conflicting lease; this session has been aborted. */
  ABORTED,
  /** The server no longer knows the transaction or session: its record expired with the lease lifetime. */
  EXPIRED,
  /**
   * The server restarted or the connection to it was lost after it granted a lease or joined the
   * transaction: what it held is gone and the outcome of the operation is unknown.
   */
  STATE_LOST;

  /** True only for {@link #OK}. */
  public boolean isOk() {
    return this == OK;
  }

  /** The worse of two outcomes. */
  public Outcome worst(Outcome other) {
    return other.ordinal() > ordinal() ? other : this;
  }

  /**
   * Reads a one-line reply. {@code SERVER_ERROR}s other than the two memory ones, and
   * {@code CLIENT_ERROR}/{@code ERROR}, are failures rather than outcomes.
   */
  static Outcome of(Reply reply) {
    if (!(reply instanceof Reply.Status status)) {
      throw new IqException("expected a status line, got " + reply);
    }
    return switch (status.word()) {
        // HD, NF and EX are memcached's meta-command answers (md).
      case "STORED", "DELETED", "OK", "OK_NOVALUE", "LEASE", "TOUCHED", "HD" -> OK;
      case "NOT_STORED" -> NOT_STORED;
      case "NOT_FOUND", "NF" -> NOT_FOUND;
      case "EXISTS", "EX" -> EXISTS;
      case "INVALID" -> INVALID;
      case "ABORT" -> ABORTED;
      default -> {
        if (status.line().equals("SERVER_ERROR out of pinned memory")) {
          yield PINNED_MEMORY_FULL;
        }
        if (status.line().startsWith("SERVER_ERROR out of memory")) {
          yield MEMORY_FULL;
        }
        throw new IqException("server answered: " + status.line());
      }
    };
  }
}
