/**
 * The IQ lease cache client. Exports the client; the wire protocol's decoding and encoding ({@code
 * io.dendrite.iq.protocol}) is shared with the server and exported to it alone.
 */
module io.dendrite.iq.client {
  requires io.netty.buffer;
  requires io.netty.common;
  // Only the server's request decoder (protocol.RequestDecoder) uses them, and only the server
  // loads it.
  requires static io.netty.codec;
  requires static io.netty.transport;
  requires org.slf4j;

  exports io.dendrite.iq.client;
  exports io.dendrite.iq.protocol to
      io.dendrite.iq.server;
}
