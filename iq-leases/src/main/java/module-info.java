/**
 * The IQ lease cache server and its client. Exports the client and the embeddable server; the wire protocol's
 * decoding and encoding ({@code io.dendrite.iq.protocol}) is shared by the two and not exported.
 */
module io.dendrite.iq {
  requires com.github.benmanes.caffeine;
  requires io.netty.buffer;
  requires io.netty.codec;
  requires io.netty.common;
  requires io.netty.handler;
  requires io.netty.transport;
  requires io.netty.transport.classes.epoll;
  requires org.slf4j;
  requires info.picocli;

  exports io.dendrite.iq.client;
  exports io.dendrite.iq.server;

  // picocli sets IqServerMain's options (ServerOptions' private fields) and makes its converters by
  // reflection.
  opens io.dendrite.iq.server to
      info.picocli;
}
