package io.dendrite.coordination;

/** A forwarded request that did not produce a result, and why; {@link #retryAtNewOwner()} says what to do next. */
public final class ForwardingException extends RuntimeException {

  /** Why a forwarded request failed. */
  public enum Reason {
    /** The process asked does not own the range (any more): find the owner again and retry there. */
    NOT_OWNER(true),
    /** The owner's queue of forwarded requests is full: retry later, or give up. */
    BUSY(false),
    /** The request waited at the owner past its deadline; it was not run. */
    DEADLINE_PASSED(false),
    /** The owner registered no operation of that name: every process must build the same Dendrites. */
    UNKNOWN_OPERATION(false),
    /** The operation ran at the owner and threw; the message is the owner's. */
    FAILED(false),
    /** The owner could not be reached (connecting, or sending the request failed): the request did not run. */
    OWNER_UNREACHABLE(true),
    /** No reply within the caller's timeout; the request may still run at the owner. */
    TIMED_OUT(false),
    /** The connection to the owner dropped with the request outstanding: it may or may not have run. */
    CONNECTION_LOST(false),
    /**
     * The owner and this process do not share the forwarding secret or TLS trust ({@link ForwardingSecurity}): the
     * connection was refused before any request was sent, and resending will not help. The message names the
     * setting.
     */
    NOT_AUTHENTICATED(false);

    private final boolean retryAtNewOwner;

    Reason(boolean retryAtNewOwner) {
      this.retryAtNewOwner = retryAtNewOwner;
    }

    /** The status byte a reply carries for this reason ({@code 0} is success). */
    byte status() {
      return (byte) (ordinal() + 1);
    }

    /** The reason a reply's status byte names; an unknown one is taken as a failure at the owner. */
    static Reason ofStatus(byte status) {
      Reason[] reasons = values();
      int index = status - 1;
      return index >= 0 && index < reasons.length ? reasons[index] : FAILED;
    }
  }

  private final Reason reason;

  ForwardingException(Reason reason, String message) {
    super(reason + ": " + message);
    this.reason = reason;
  }

  ForwardingException(Reason reason, String message, Throwable cause) {
    super(reason + ": " + message, cause);
    this.reason = reason;
  }

  /**
   * For an {@link ForwardingServer.Operation} to throw when it finds, while it runs, that this process does not serve
   * the range (any more, or not yet): the caller gets {@link Reason#NOT_OWNER} and retries at the owner.
   */
  public static ForwardingException notOwner(String message) {
    return new ForwardingException(Reason.NOT_OWNER, message);
  }

  public Reason reason() {
    return reason;
  }

  /**
   * Whether the request surely did not run and may be sent to the range's owner as the coordinator now names it.
   * {@link Reason#TIMED_OUT} is not: the request may have run.
   */
  public boolean retryAtNewOwner() {
    return reason.retryAtNewOwner;
  }
}
