package io.dendrite.iq.protocol;

/**
 * A request that could not be framed: the line was too long, a length field was unreadable, a data
 * block was oversized or badly terminated. By the time this is emitted the decoder has already
 * skipped everything that belonged to the bad request, so the connection stays in step and the
 * server only has to answer {@code CLIENT_ERROR <reason>}.
 *
 * @param reason a short human-readable cause, sent after {@code CLIENT_ERROR}
 * @param closes whether the connection must be closed after the reply: the decoder reads nothing more from it (a
 *     client that has not logged in announced more data than a login needs)
 */
public record FramingError(String reason, boolean closes) {

  /** An error after which the connection stays in step and open. */
  public FramingError(String reason) {
    this(reason, false);
  }
}
