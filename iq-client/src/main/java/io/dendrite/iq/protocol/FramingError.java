package io.dendrite.iq.protocol;

/**
 * A request that could not be framed: the line was too long, a length field was unreadable, a data
 * block was oversized or badly terminated. By the time this is emitted the decoder has already
 * skipped everything that belonged to the bad request, so the connection stays in step and the
 * server only has to answer {@link #line}.
 *
 * @param line the whole error line the server answers, without its {@code \r\n}: {@code CLIENT_ERROR <reason>} for
 *     a request the client got wrong, {@code SERVER_ERROR <reason>} where memcached answers so (a value over the
 *     item size limit: a well-formed request this server will not hold)
 * @param closes whether the connection must be closed after the reply: the decoder reads nothing more from it (a
 *     client that has not logged in announced more data than a login needs)
 */
public record FramingError(String line, boolean closes) {

  /** {@code CLIENT_ERROR <reason>}, after which the connection stays in step and open. */
  public static FramingError clientError(String reason) {
    return new FramingError("CLIENT_ERROR " + reason, false);
  }

  /** {@code CLIENT_ERROR <reason>}, after which the connection is closed. */
  public static FramingError clientErrorClosing(String reason) {
    return new FramingError("CLIENT_ERROR " + reason, true);
  }

  /** {@code SERVER_ERROR <reason>}, after which the connection stays in step and open. */
  public static FramingError serverError(String reason) {
    return new FramingError("SERVER_ERROR " + reason, false);
  }
}
