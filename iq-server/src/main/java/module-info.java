/**
 * The IQ lease cache server, embedded ({@code IqServer.start(config)}) or a process ({@code java -jar iq-server.jar}).
 * Exports the server; it speaks the client's wire protocol ({@code io.dendrite.iq.protocol}), which the client module
 * exports to it alone.
 */
module io.dendrite.iq.server {
  requires io.dendrite.iq.client;
  requires com.github.benmanes.caffeine;
  requires io.netty.buffer;
  requires io.netty.codec;
  requires io.netty.common;
  requires io.netty.handler;
  requires io.netty.transport;
  requires io.netty.transport.classes.epoll;
  requires org.slf4j;
  requires info.picocli;

  exports io.dendrite.iq.server;

  // picocli sets IqServerMain's options (ServerOptions' private fields) and makes its converters by
  // reflection.
  opens io.dendrite.iq.server to
      info.picocli;
}
